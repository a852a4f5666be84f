import { DOCTOR_AREAS, type DoctorCheck } from '../../core/discovery';
import { AREA_TITLES, summarizeChecks } from '../../core/doctor/report-text';

const ICON = { ok: '✓', warn: '!', fail: '✗', 'not-run': '–' } as const;
const SAID = { ok: 'passed', warn: 'warning', fail: 'problem', 'not-run': 'not checked' } as const;
const CLASS = { ok: 'status-ok', warn: 'status-warn', fail: 'status-fail', 'not-run': 'muted' } as const;

function Check({ check: c }: { check: DoctorCheck }) {
  const icon = (
    <span className={CLASS[c.status]} role="img" aria-label={SAID[c.status]}>
      {ICON[c.status]}
    </span>
  );
  // A passed check is one line, its evidence a click away; anything else shows what was seen and the fix.
  if (c.status === 'ok')
    return (
      <li data-status={c.status} data-check={c.id}>
        <details>
          <summary>
            {icon} <strong>{c.title}</strong>
          </summary>
          <span className="muted">{c.detail}</span>
        </details>
      </li>
    );
  return (
    <li data-status={c.status} data-check={c.id}>
      {icon} <strong>{c.title}</strong> <span className="muted">{c.detail}</span>
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
  );
}

/** The doctor's report, grouped by area: driver, compilers, environment, GPU state, processes. */
export function DoctorChecks({ checks }: { checks: DoctorCheck[] }) {
  return (
    <div data-testid="doctor">
      <p className="muted" data-testid="doctor-summary">
        {summarizeChecks(checks)}
      </p>
      {DOCTOR_AREAS.map((area) => {
        const here = checks.filter((c) => (c.area ?? 'environment') === area);
        if (!here.length) return null;
        return (
          <section key={area} aria-label={AREA_TITLES[area]}>
            <h4 className="muted">{AREA_TITLES[area]}</h4>
            <ul className="checks">
              {here.map((c) => (
                <Check key={c.id} check={c} />
              ))}
            </ul>
          </section>
        );
      })}
    </div>
  );
}
