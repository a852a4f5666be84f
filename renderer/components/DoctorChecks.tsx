import type { DoctorCheck } from '../../core/discovery';

const ICON = { ok: '✓', warn: '!', fail: '✗' } as const;

export function DoctorChecks({ checks }: { checks: DoctorCheck[] }) {
  return (
    <ul className="checks" data-testid="doctor">
      {checks.map((c) => (
        <li key={c.id}>
          <span className={`status-${c.status}`}>{ICON[c.status]}</span> <strong>{c.title}</strong> <span className="muted">{c.detail}</span>
          {c.remedy && <div className="muted">→ {c.remedy}</div>}
          {c.searched && c.searched.length > 0 && (
            <details>
              <summary className="muted">searched {c.searched.length} places</summary>
              <ul className="mono">
                {c.searched.map((s) => (
                  <li key={s}>{s}</li>
                ))}
              </ul>
            </details>
          )}
        </li>
      ))}
    </ul>
  );
}
