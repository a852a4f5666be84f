import { formatBytes, formatMs, formatNumber as fmt, partOf, plural, thousands } from '../../core/format';
import type { DeviceOutput } from '../../core/runner/device-output';
import type { BufferPage } from '../../core/runner/protocol';
import type { DeterminismReport, RunResult } from '../../core/runner/run-result';
import type { RunOutcome } from '../../core/runner/run-outcome';

const PAGE = 256;

/** Each step with its time; a launch run several times, its median with its spread. The failed step marked. */
function RunSteps({ r }: { r: RunResult }) {
  return (
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
  );
}

/** Whether a second run on the same inputs gave the same results: the buffers that differed and where, or why it was not compared. */
function DeterminismNote({ d }: { d: DeterminismReport }) {
  return (
    <p className={d.differences.length ? 'status-fail' : d.status === 'compared' ? 'status-ok' : 'muted'} data-testid="determinism">
      {d.status === 'compared'
        ? d.differences.length
          ? `A second run on the same inputs gave different results: ${d.differences
              .map((x) => `${x.buffer} (${partOf(x.differing, x.count, 'element')}, first [${x.firstIndex}]: ${fmt(x.first)} then ${fmt(x.second)})`)
              .join('; ')}`
          : `${d.runs === 1 ? 'A second run' : `${d.runs} more runs`} on the same inputs gave bit-identical results (${formatMs(d.ms)}).`
        : `Not compared with a second run: ${d.reason ?? 'turned off'}.`}
    </p>
  );
}

/** Previous and next page of a buffer kept in the runner, and which elements are shown. */
function BufferPager({ name, count, page, onPage }: { name: string; count: number; page: BufferPage | undefined; onPage: (offset: number) => void }) {
  const offset = page?.offset ?? 0;
  return (
    <div className="pager">
      <button disabled={!page || offset === 0} aria-label={`Previous page of ${name}`} onClick={() => onPage(Math.max(0, offset - PAGE))}>
        ◀ Previous
      </button>
      <button
        disabled={!!page && offset + PAGE >= count}
        aria-label={page ? `Next page of ${name}` : `Page through all ${count} of ${name}`}
        onClick={() => onPage(page ? offset + PAGE : 0)}
      >
        {page ? 'Next ▶' : `Page through all ${count}`}
      </button>
      {page && (
        <span className="muted">
          elements {offset}–{Math.min(count, offset + PAGE) - 1} of {count}
        </span>
      )}
    </div>
  );
}

/** One buffer read back: its figures, poison never written over, its comparison with what was expected, its values (a page of them when paged). */
function BufferCard({
  r,
  b,
  page,
  pageable,
  onPage,
}: {
  r: RunResult;
  b: RunResult['buffers'][number];
  page: BufferPage | undefined;
  pageable: boolean;
  onPage: (offset: number) => void;
}) {
  const offset = page?.offset ?? 0;
  const comparison = r.checks?.comparisons.find((c) => c.buffer === b.name);
  return (
    <div className="buffer" data-testid={`buffer-${b.name}`}>
      <h4>
        {b.name}: {b.type}[{b.count}] · min {fmt(b.min)} · max {fmt(b.max)} · mean {fmt(b.mean)} · NaN {thousands(b.nanCount)} · Inf {thousands(b.infCount)}
      </h4>
      {b.poison && b.poison.poisonCount > 0 && (
        <p className="status-fail" data-testid={`poison-${b.name}`}>
          {plural(b.poison.poisonCount, 'element')} still {b.poison.poisonCount === 1 ? 'holds' : 'hold'} the poison pattern (never written), the first at [
          {b.poison.firstPoisonIndex}]
        </p>
      )}
      {comparison && (
        <p className={comparison.mismatches ? 'status-fail' : 'status-ok'} data-testid={`compare-${b.name}`}>
          {comparison.mismatches
            ? `${partOf(comparison.mismatches, comparison.checked, 'element')} ${comparison.mismatches === 1 ? 'differs' : 'differ'} from ${comparison.against}; first at [${comparison.first[0]?.index}]: ${fmt(comparison.first[0]?.actual ?? null)}, expected ${fmt(comparison.first[0]?.expected ?? null)}`
            : `all ${plural(comparison.checked, 'element')} match ${comparison.against}`}
        </p>
      )}
      <p className="mono values">
        {page
          ? page.values.map((v, i) => `[${offset + i}] ${fmt(v)}`).join('  ')
          : `${b.head.map(fmt).join(', ')}${b.tail.length ? ', …, ' + b.tail.map(fmt).join(', ') : ''}`}
      </p>
      {pageable && b.count > 32 && <BufferPager name={b.name} count={b.count} page={page} onPage={onPage} />}
    </div>
  );
}

/** What the kernels printed (printf, assert), by the step after which it appeared. */
function DeviceOutputList({ output }: { output: DeviceOutput[] }) {
  return (
    <div data-testid="device-output">
      <h4>Device output (printf and assert messages)</h4>
      {output.map((o) => (
        <div key={o.stepIndex}>
          <p className="muted">after step {o.stepIndex + 1}</p>
          <pre className="mono device-output">
            {o.text}
            {o.droppedBytes ? `\n… ${formatBytes(o.droppedBytes)} more not kept` : ''}
          </pre>
        </div>
      ))}
    </div>
  );
}

/**
 * What a run recorded, below its diagnosis: steps, the determinism check, each buffer (paged through the runner's copy
 * when `pageable` says it still has one), device output, leaks and times.
 */
export function RunResultDetails({
  outcome,
  r,
  pages,
  pageable,
  onPage,
}: {
  outcome: RunOutcome;
  r: RunResult;
  pages: Record<string, BufferPage>;
  pageable: (buffer: string) => boolean;
  onPage: (buffer: string, offset: number, count: number) => void;
}) {
  return (
    <>
      <h4>Steps</h4>
      <RunSteps r={r} />
      {r.checks?.determinism && <DeterminismNote d={r.checks.determinism} />}
      {r.buffers.map((b) => (
        <BufferCard key={b.name} r={r} b={b} page={pages[b.name]} pageable={pageable(b.name)} onPage={(offset) => onPage(b.name, offset, PAGE)} />
      ))}
      {(r.deviceOutput ?? []).length > 0 && <DeviceOutputList output={r.deviceOutput!} />}
      {r.leaks.length > 0 && <p className="status-warn">Never freed: {r.leaks.map((l) => `${l.name} (${formatBytes(l.bytes)})`).join(', ')}</p>}
      <p className="muted">
        Runner {formatMs(r.executeMs)} · host total {formatMs(outcome.timing.totalMs)} · pid {r.runnerPid}
      </p>
    </>
  );
}
