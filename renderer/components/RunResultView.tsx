import { useState } from 'react';
import { useStore } from 'zustand';

import { formatBytes, formatMs } from '../../core/format';
import type { Diagnosis } from '../../core/runner/diagnose';
import type { WorkbenchStore } from '../store/store';
import { revealPosition } from './EditorPane';

const PAGE = 256;
const fmt = (n: number | null) => (n === null ? 'NaN' : Number.isInteger(n) || !Number.isFinite(n) ? String(n) : n.toPrecision(6).replace(/\.?0+$/, ''));

export function DiagnosisCard({ d }: { d: Diagnosis }) {
  return (
    <section className={`diagnosis diagnosis-${d.severity}`} data-testid="diagnosis">
      <h3 data-testid="diagnosis-headline">
        {d.severity === 'ok' ? '✓' : d.severity === 'warning' ? '!' : '✗'} {d.headline}
      </h3>
      {d.step && (
        <p data-testid="diagnosis-step">
          Step {d.step.index + 1}: <span className="mono">{d.step.label}</span>
          {d.kernel ? ` · kernel ${d.kernel.entry}` : ''}
        </p>
      )}
      {d.sourceLocation && (
        <p data-testid="diagnosis-source">
          Source:{' '}
          <button className="link mono" onClick={() => revealPosition(d.sourceLocation!.line, 1)} title="Show this line in the editor">
            {d.sourceLocation.file}:{d.sourceLocation.line}
          </button>
        </p>
      )}
      {d.error && (
        <p className="mono" data-testid="diagnosis-error">
          {d.error.name} ({d.error.code}) from {d.error.api}
          {d.error.runtimeName && d.error.runtimeName !== d.error.name ? ` — ${d.error.runtimeName} in the runtime API` : ''}
          {d.error.sticky ? ' · sticky: the context was discarded; the next run uses a fresh runner' : ''}
        </p>
      )}
      {d.explanation && (
        <div data-testid="diagnosis-explanation">
          <p>{d.explanation.summary}</p>
          {d.explanation.causes.length > 0 && (
            <>
              <h4>Likely causes</h4>
              <ul>
                {d.explanation.causes.map((c) => (
                  <li key={c}>{c}</li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
      {d.specifics.length > 0 && (
        <ul data-testid="diagnosis-specifics">
          {d.specifics.map((s) => (
            <li key={s}>{s}</li>
          ))}
        </ul>
      )}
      {d.launchFindings
        .filter((f) => f.severity !== 'note')
        .map((f) => (
          <p key={f.rule} className={`finding-${f.severity}`} data-testid={`diagnosis-finding-${f.rule}`}>
            {f.message}
            {f.fix ? ` Fix: ${f.fix}` : ''}
          </p>
        ))}
      {d.memory && (
        <div data-testid="diagnosis-memory">
          <p>
            Requested {formatBytes(d.memory.requestedBytes)} · free {formatBytes(d.memory.freeBytes)} of {formatBytes(d.memory.totalBytes)}
          </p>
          {d.memory.processes && (
            <table>
              <tbody>
                {d.memory.processes.map((p) => (
                  <tr key={p.pid}>
                    <td>pid {p.pid}</td>
                    <td className="mono">{p.name}</td>
                    <td>{p.usedBytes === null ? '?' : formatBytes(p.usedBytes)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
      {d.sanitizer && (
        <div className="sanitizer" data-testid="diagnosis-sanitizer">
          <button disabled title="The in-app compute-sanitizer re-run comes in a later version">
            Re-run under compute-sanitizer ({d.sanitizer.tool})
          </button>{' '}
          <span className="muted">{d.sanitizer.why} From a terminal today:</span>
          <pre>{d.sanitizer.command}</pre>
        </div>
      )}
      {d.next.length > 0 && (
        <>
          <h4>What to do</h4>
          <ul>
            {d.next.map((n) => (
              <li key={n}>{n}</li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/** The last run (or an opened result file): diagnosis first, then steps, launches, buffers with paging. */
export function RunResultView({ store }: { store: WorkbenchStore }) {
  const s = useStore(store);
  const [path, setPath] = useState('');
  const o = s.outcome;
  const r = o?.result ?? null;
  return (
    <div className="run-result" data-testid="run-result">
      <div className="run-actions">
        <input aria-label="Result file" placeholder="/path/to/result.json" value={path} onChange={(e) => setPath(e.target.value)} />
        <button onClick={() => void s.openOutcome(path.trim())}>Open result</button>
        <button
          disabled={!o}
          onClick={() =>
            void s.api.invoke('run.save', { path: path.trim(), outcome: o }).then(
              () => undefined,
              (e: Error) => store.setState({ runError: e.message }),
            )
          }
        >
          Save result
        </button>
        {s.outcomeSource && <span className="muted">opened from {s.outcomeSource}</span>}
      </div>
      {s.runError && (
        <p className="status-fail" role="alert">
          {s.runError}
        </p>
      )}
      {!o && <p className="muted">Run a kernel (the Run section on the right), or open a saved result.</p>}
      {o && <DiagnosisCard d={o.diagnosis} />}
      {r && (
        <>
          <h4>Steps</h4>
          <table data-testid="run-steps">
            <tbody>
              {r.steps.map((step) => {
                const launch = r.launches.find((l) => l.stepIndex === step.index);
                return (
                  <tr key={step.index} className={r.failure?.stepIndex === step.index ? 'failed-step' : ''}>
                    <td>{step.index + 1}</td>
                    <td className="mono">{step.label}</td>
                    <td>
                      {step.ms === null ? '—' : formatMs(step.ms)}
                      {launch && launch.timesMs.length > 1
                        ? ` median (min ${formatMs(launch.minMs)}, max ${formatMs(launch.maxMs)}, ${launch.timesMs.length} runs)`
                        : ''}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {r.checks?.determinism && (
            <p
              className={r.checks.determinism.differences.length ? 'status-fail' : r.checks.determinism.status === 'compared' ? 'status-ok' : 'muted'}
              data-testid="determinism"
            >
              {r.checks.determinism.status === 'compared'
                ? r.checks.determinism.differences.length
                  ? `A second run on the same inputs gave different results: ${r.checks.determinism.differences
                      .map((d) => `${d.buffer} (${d.differing} of ${d.count} elements, first [${d.firstIndex}]: ${fmt(d.first)} then ${fmt(d.second)})`)
                      .join('; ')}`
                  : `${r.checks.determinism.runs === 1 ? 'A second run' : `${r.checks.determinism.runs} more runs`} on the same inputs gave bit-identical results (${formatMs(r.checks.determinism.ms)}).`
                : `Not compared with a second run: ${r.checks.determinism.reason ?? 'turned off'}.`}
            </p>
          )}
          {r.buffers.map((b) => {
            const page = s.pages[b.name];
            const offset = page?.offset ?? 0;
            const comparison = r.checks?.comparisons.find((c) => c.buffer === b.name);
            const pageable = r.pageable?.includes(b.name) && !s.outcomeSource;
            return (
              <div key={b.name} className="buffer" data-testid={`buffer-${b.name}`}>
                <h4>
                  {b.name}: {b.type}[{b.count}] · min {fmt(b.min)} · max {fmt(b.max)} · mean {fmt(b.mean)} · NaN {b.nanCount} · Inf {b.infCount}
                </h4>
                {b.poison && b.poison.poisonCount > 0 && (
                  <p className="status-fail" data-testid={`poison-${b.name}`}>
                    {b.poison.poisonCount} element(s) still hold the poison pattern (never written), the first at [{b.poison.firstPoisonIndex}]
                  </p>
                )}
                {comparison && (
                  <p className={comparison.mismatches ? 'status-fail' : 'status-ok'} data-testid={`compare-${b.name}`}>
                    {comparison.mismatches
                      ? `${comparison.mismatches} of ${comparison.checked} differ from ${comparison.against}; first at [${comparison.first[0]?.index}]: ${fmt(comparison.first[0]?.actual ?? null)}, expected ${fmt(comparison.first[0]?.expected ?? null)}`
                      : `all ${comparison.checked} match ${comparison.against}`}
                  </p>
                )}
                <p className="mono values">
                  {page
                    ? page.values.map((v, i) => `[${offset + i}] ${fmt(v)}`).join('  ')
                    : `${b.head.map(fmt).join(', ')}${b.tail.length ? ', …, ' + b.tail.map(fmt).join(', ') : ''}`}
                </p>
                {pageable && b.count > 32 && (
                  <div className="pager">
                    <button
                      disabled={!page || offset === 0}
                      aria-label={`Previous page of ${b.name}`}
                      onClick={() => void s.page(b.name, Math.max(0, offset - PAGE), PAGE)}
                    >
                      ◀ Previous
                    </button>
                    <button
                      disabled={!!page && offset + PAGE >= b.count}
                      aria-label={page ? `Next page of ${b.name}` : `Page through all ${b.count} of ${b.name}`}
                      onClick={() => void s.page(b.name, page ? offset + PAGE : 0, PAGE)}
                    >
                      {page ? 'Next ▶' : `Page through all ${b.count}`}
                    </button>
                    {page && (
                      <span className="muted">
                        elements {offset}–{Math.min(b.count, offset + PAGE) - 1} of {b.count}
                      </span>
                    )}
                  </div>
                )}
              </div>
            );
          })}
          {(r.deviceOutput ?? []).length > 0 && (
            <div data-testid="device-output">
              <h4>Device output (printf and assert messages)</h4>
              {r.deviceOutput!.map((o) => (
                <div key={o.stepIndex}>
                  <p className="muted">after step {o.stepIndex + 1}</p>
                  <pre className="mono device-output">
                    {o.text}
                    {o.droppedBytes ? `\n… ${formatBytes(o.droppedBytes)} more not kept` : ''}
                  </pre>
                </div>
              ))}
            </div>
          )}
          {r.leaks.length > 0 && <p className="status-warn">Never freed: {r.leaks.map((l) => `${l.name} (${formatBytes(l.bytes)})`).join(', ')}</p>}
          <p className="muted">
            Runner {formatMs(r.executeMs)} · host total {formatMs(o!.timing.totalMs)} · pid {r.runnerPid}
          </p>
        </>
      )}
    </div>
  );
}
