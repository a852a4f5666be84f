import type { KeyboardEvent } from 'react';
import { useStore } from 'zustand';

import { sanitizerUnavailable } from '../../core/availability';

import { formatBytes, formatMs, plural } from '../../core/format';
import {
  compiledAs,
  countLabel,
  findingPlaces,
  frameLabel,
  lacksLineInfo,
  placeLabel,
  showsFrame,
  threadsLabel,
  withoutLineInfoAdvice,
} from '../../core/sanitizer/finding-places';
import type { FindingGroup, SanitizerSummary } from '../../core/sanitizer/findings';
import { describeFrame, describeGroup, LINEINFO_ADVICE } from '../../core/sanitizer/group';
import { detailsBesideHeld, foldedErrors, heldSection } from '../../core/sanitizer/report-sections';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { basenameOf } from '../../core/workspace/paths';
import type { SanitizeOrigin } from '../store/sanitizer-slice';
import type { WorkbenchStore } from '../store/store';
import { Prose } from './Prose';
import { DiagnosisCard } from './RunResultView';

const PHASES = { checks: 'checking the plan', compile: 'compiling', run: 'running', diagnose: 'reading the report' } as const;

/** ↑ and ↓ move between the rows that lead to a line, as in the Problems list. */
function onRowsKeyDown(e: KeyboardEvent<HTMLUListElement>) {
  if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
  const rows = [...e.currentTarget.querySelectorAll<HTMLButtonElement>('button.finding-main')];
  const at = rows.indexOf(document.activeElement as HTMLButtonElement);
  if (at < 0) return;
  rows[Math.max(0, Math.min(rows.length - 1, at + (e.key === 'ArrowDown' ? 1 : -1)))]?.focus();
  e.preventDefault();
}

/** One place in the code: what happened there (the sentence), how often, which threads, the buffer, the host frame. */
function FindingRow({ group, summary, store }: { group: FindingGroup; summary: SanitizerSummary; store: WorkbenchStore }) {
  const places = findingPlaces(group);
  const target = places[0] ?? null;
  const sentence = describeGroup(group, summary);
  const threads = threadsLabel(group);
  const count = countLabel(group);
  const severity = group.severity === 'error' ? 'fail' : group.severity === 'warning' ? 'warn' : 'ok';
  const copy = compiledAs(group);
  const folded = foldedErrors(group, summary);
  const go = (place: { file: string; line: number }) => void store.getState().revealFinding(place);
  const head = (
    <>
      <span className="finding-head">
        <span className={`status-${severity}`}>{group.severity}</span> <span className="mono finding-place">{placeLabel(group)}</span>{' '}
        <span className="finding-count" title={count.title} data-testid="finding-count">
          {count.text}
        </span>
      </span>
      <span className="finding-sentence" data-testid="finding-sentence">
        <Prose text={withoutLineInfoAdvice(sentence)} />
      </span>
    </>
  );
  return (
    <li className={`finding finding-${group.severity}`} data-testid="sanitizer-finding" data-kind={group.kind} data-line={target?.line ?? ''}>
      {target ? (
        <button className="finding-main" onClick={() => go(target)} title={`Open ${basenameOf(target.file)} at line ${target.line}`} data-testid="finding-open">
          {head}
        </button>
      ) : (
        <div className="finding-main">{head}</div>
      )}
      <div className="finding-meta">
        {threads && (
          <p className="mono" data-testid="finding-threads">
            {threads}
          </p>
        )}
        {group.addressNamed && (
          <p data-testid="finding-buffer">
            Address: <Prose text={group.addressNamed} />
          </p>
        )}
        {group.kind === 'leak' && group.example.leak?.address && (
          <p className="muted mono">
            {group.count > 1 ? 'the first at' : 'at'} {group.example.leak.address}
          </p>
        )}
        {group.userFrame && showsFrame(group) && (
          <p data-testid="finding-frame">
            {frameLabel(group)} <span className="mono">{describeFrame(group.userFrame)}</span>
          </p>
        )}
        {places.slice(1).map((p) => (
          <p key={`${p.file}:${p.line}`}>
            {p.role === 'second' ? 'The other access' : p.role === 'frame' ? 'Host code' : 'Also'}:{' '}
            <button className="link mono" onClick={() => go(p)} title={`Open ${basenameOf(p.file)} at line ${p.line}`}>
              {basenameOf(p.file)}:{p.line}
            </button>
          </p>
        ))}
        {copy && (
          <p className="muted" data-testid="finding-copy">
            <Prose text={copy} />
          </p>
        )}
        {lacksLineInfo(group) && (
          <p className="status-warn" data-testid="finding-lineinfo">
            {LINEINFO_ADVICE}
          </p>
        )}
        {folded && (
          // The API errors the dead context gave after this fault: one line, each error's own sentence when opened.
          <details data-testid="finding-folded">
            <summary>
              <Prose text={folded.line} />
            </summary>
            <ul>
              {folded.errors.map((e) => (
                <li key={e.key}>
                  <Prose text={e.sentence} />
                </li>
              ))}
            </ul>
          </details>
        )}
      </div>
    </li>
  );
}

/** Memory an allocator or the workbench held at exit: said apart from the findings, and why it is not the user's leak. */
function HeldAtExit({ report }: { report: SanitizeReport }) {
  const section = heldSection(report);
  if (!section) return null;
  return (
    <section className="sanitizer-held" aria-label="Memory held at exit" data-testid="sanitizer-held">
      <h4>
        <Prose text={section.title} />
      </h4>
      {section.holders.map((h) => (
        <div key={h.holder} data-testid="sanitizer-held-holder">
          <p>
            <Prose text={h.held} />
          </p>
          <p className="muted">
            <Prose text={h.why} />
          </p>
        </div>
      ))}
    </section>
  );
}

/** The verdict, what else the run said (the held memory's sentences aside: their own section says them), and what could not be read. */
function ReportHead({ report }: { report: SanitizeReport }) {
  const problems = report.problems.filter((p) => !report.details.includes(p));
  // The held memory's sentences are in the details too (for the text report): here, once, in their own section.
  const details = detailsBesideHeld(report);
  const verdictClass = report.verdict === 'found' ? 'fail' : report.verdict === 'clean' ? 'ok' : 'warn';
  return (
    <>
      <h3 className={`status-${verdictClass}`} data-testid="sanitizer-headline">
        {report.verdict === 'found' ? '✗ ' : report.verdict === 'clean' ? '' : '! '}
        <Prose text={report.headline} />
      </h3>
      {details.length > 0 && (
        <ul data-testid="sanitizer-details">
          {details.map((d, i) => (
            <li key={i}>
              <Prose text={d} />
            </li>
          ))}
        </ul>
      )}
      {problems.length > 0 && (
        <div data-testid="sanitizer-problems">
          <h4>What could not be read or trusted</h4>
          <ul>
            {problems.map((p, i) => (
              <li key={i} className="status-warn">
                <Prose text={p} />
              </li>
            ))}
          </ul>
        </div>
      )}
    </>
  );
}

/** The program's own output and the tool's, folded until asked for. */
function ReportOutputs({ report }: { report: SanitizeReport }) {
  return (
    <>
      {report.programOutput && (
        <details data-testid="sanitizer-program-output">
          <summary>The program’s own output ({plural(report.programOutput.split('\n').length, 'line')})</summary>
          {/* Focusable: a long output scrolls, and keyboard users scroll it too. */}
          <pre className="mono device-output" tabIndex={0} aria-label="The program’s own output">
            {report.programOutput}
            {report.outputDroppedBytes ? `\n… ${formatBytes(report.outputDroppedBytes)} more not kept` : ''}
          </pre>
        </details>
      )}
      {report.toolOutput && (
        <details data-testid="sanitizer-tool-output">
          <summary>What compute-sanitizer printed</summary>
          <pre className="mono device-output" tabIndex={0} aria-label="What compute-sanitizer printed">
            {report.toolOutput}
          </pre>
        </details>
      )}
    </>
  );
}

function originLine(origin: SanitizeOrigin | null): string {
  if (!origin) return '';
  if (origin.kind === 'file')
    return origin.xmlPath === null
      ? `Opened from ${origin.textPath ?? ''}: the text the tool printed, without its XML report`
      : `Opened from ${origin.xmlPath}${origin.textPath ? `, with ${origin.textPath}` : ' (without the text the tool printed)'}`;
  if (origin.kind === 'program') return `${origin.command.join(' ')}, in ${origin.cwd}`;
  if (origin.kind === 'bundle') return `From the bundle ${origin.path} (read-only): its findings are marked on the bundle's own files`;
  return `A re-run of ${origin.label}`;
}

/**
 * compute-sanitizer's report, as a person fixes it: the verdict (clean only when the report says so), what
 * could not be read, then one row per place in the code, each leading to its line; the program's own output.
 */
export function SanitizerView({ store, onOpenReport, onSanitizeProgram }: { store: WorkbenchStore; onOpenReport: () => void; onSanitizeProgram: () => void }) {
  const report = useStore(store, (s) => s.sanitizeReport);
  const origin = useStore(store, (s) => s.sanitizeOrigin);
  const progress = useStore(store, (s) => s.sanitizeProgress);
  const error = useStore(store, (s) => s.sanitizeError);
  const refused = useStore(store, (s) => s.sanitizeRefused);
  // What this machine lacks for running anything under the tool, from the host's discovery.
  const noTool = useStore(store, (s) => sanitizerUnavailable(s.discovery));
  const run = origin?.kind === 'run' ? origin.run : null;
  return (
    <div className="sanitizer-view" data-testid="sanitizer-view">
      <div className="run-actions">
        <button onClick={onOpenReport} data-testid="open-sanitizer-report">
          Open sanitizer report…
        </button>
        <button
          onClick={onSanitizeProgram}
          disabled={!!progress || noTool !== null}
          title={progress ? `${progress.tool} is running ${progress.label}: wait for it, or cancel it (below)` : (noTool ?? undefined)}
          aria-describedby={noTool ? 'sanitize-program-unavailable' : undefined}
          data-testid="sanitize-program"
        >
          Sanitize a program…
        </button>
        {(report || error || refused) && !progress && (
          <button onClick={() => store.getState().dismissSanitizer()} title="Close this report and take its marks off the editor">
            Close report
          </button>
        )}
        {origin && <span className="muted">{originLine(origin)}</span>}
      </div>
      {noTool && (
        // Off before it is pressed, and why, as Run is (the tool is what this machine lacks, not the program).
        <p id="sanitize-program-unavailable" className="muted" data-testid="sanitize-program-unavailable">
          <Prose text={noTool} />
        </p>
      )}
      {progress && (
        <p role="status" className="sanitizer-progress" data-testid="sanitizer-progress">
          Running {progress.label} under {progress.tool}
          {progress.phase ? `: ${PHASES[progress.phase]}` : ''}… {plural(progress.findings, 'finding')} so far.{' '}
          <span className="muted">Instrumented code runs 10 to 100 times slower.</span>{' '}
          <button onClick={() => store.getState().cancelSanitize()} data-testid="cancel-sanitize">
            Cancel {progress.tool}
          </button>
        </p>
      )}
      {refused && (
        // Keyed by its count: a second refusal in a row is announced again.
        <p key={refused.seq} className="status-warn" role="alert" data-testid="sanitizer-refused">
          <Prose text={refused.message} />
        </p>
      )}
      {error && (
        <p className={error.code === 'CANCELLED' ? 'muted' : 'status-fail'} role="alert" data-testid="sanitizer-error">
          <Prose text={error.message} />
        </p>
      )}
      {!report && !progress && !error && !refused && (
        <p className="muted">
          No compute-sanitizer report. Re-run a failed run under compute-sanitizer (the button in its diagnosis, Run tab), or open a report the tool saved
          (compute-sanitizer --xml --save report.xml).
        </p>
      )}
      {report && (
        <section className={`sanitizer-report verdict-${report.verdict}`} aria-label="compute-sanitizer report">
          <ReportHead report={report} />
          <p className="muted" data-testid="sanitizer-meta">
            {report.tool}
            {report.sanitizer.version ? ` · compute-sanitizer ${report.sanitizer.version}` : ''}
            {report.command.length ? ` · ${report.command.join(' ')}` : ''}
            {origin?.kind === 'run' ? ` · ${formatMs(report.durationMs)}` : ''}
            {report.xmlFiles.length ? ` · ${report.xmlFiles.map((f) => `${f.name} (${formatBytes(f.bytes)})`).join(', ')}` : ''}
          </p>
          {run && (
            <details className="sanitizer-run" open={run.status !== 'ok'} data-testid="sanitizer-run">
              <summary>
                The run under {report.tool}: <Prose text={run.diagnosis.headline} />
              </summary>
              <DiagnosisCard
                d={{ ...run.diagnosis, sanitizer: null }}
                store={store}
                origin={origin?.kind === 'run' ? { file: null, planPath: origin.planPath, sources: origin.sources } : null}
                compile={run.compile}
              />
            </details>
          )}
          {report.groups.length > 0 && (
            <>
              <h4>
                {plural(report.findings, 'finding')} in {plural(report.groups.length, 'place')}{' '}
                <span className="muted">(a row with a line opens it in the editor)</span>
              </h4>
              <ul className="findings" data-testid="sanitizer-findings" onKeyDown={onRowsKeyDown} aria-label="compute-sanitizer findings">
                {report.groups.map((g) => (
                  <FindingRow key={g.key} group={g} summary={report.summary} store={store} />
                ))}
              </ul>
            </>
          )}
          <HeldAtExit report={report} />
          <ReportOutputs report={report} />
        </section>
      )}
    </div>
  );
}
