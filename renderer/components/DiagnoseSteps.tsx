import { useLayoutEffect, useRef } from 'react';

import { durationText } from '../../core/diagnose/diagnosis-view-text';
import { plural } from '../../core/format';
import type { DiagnosisStep } from '../../core/diagnose/report';
import { droppedOutputNote } from '../../core/diagnose/streamed-diagnosis';
import { Prose } from './Prose';

const STATUS: Record<DiagnosisStep['status'], { text: string; className: string }> = {
  running: { text: 'running…', className: 'status-warn' },
  done: { text: 'done', className: 'status-ok' },
  'could-not-run': { text: 'could not run', className: 'status-fail' },
  stopped: { text: 'stopped', className: 'status-warn' },
  'not-run': { text: 'not run', className: 'muted' },
};

/** A step's output: its text, and how much of its head was not kept. */
export interface StepOutput {
  text: string;
  droppedChars: number;
}

/** What ran, as words: the environment's changes, then the program and its arguments, each word a word (no shell quoting). */
export function CommandWords({ argv, env }: { argv: string[]; env: Record<string, string> }) {
  return (
    <span className="command-words">
      {Object.entries(env).map(([name, value]) => (
        <code key={`env-${name}`} className="command-word env-word">
          {name}={value}
        </code>
      ))}
      {argv.map((word, i) => (
        <code key={i} className="command-word">
          {word}
        </code>
      ))}
    </span>
  );
}

/** Output as it streams: it follows the newest line unless the reader has scrolled up; keyboard users can scroll it. */
function OutputPre({ text, label }: { text: string; label: string }) {
  const ref = useRef<HTMLPreElement>(null);
  const following = useRef(true);
  useLayoutEffect(() => {
    const pre = ref.current;
    if (pre && following.current) pre.scrollTop = pre.scrollHeight;
  }, [text]);
  return (
    <pre
      ref={ref}
      className="mono device-output diagnose-output"
      tabIndex={0}
      aria-label={label}
      aria-live="off"
      onScroll={(e) => {
        const pre = e.currentTarget;
        following.current = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
      }}
    >
      {text}
    </pre>
  );
}

function Step({ step, index, output, live }: { step: DiagnosisStep; index: number; output: StepOutput | null; live: boolean }) {
  const status = STATUS[step.status];
  const lines = output?.text ? output.text.split('\n').length - (output.text.endsWith('\n') ? 1 : 0) : 0;
  const dropped = output ? droppedOutputNote(output.droppedChars) : null;
  return (
    <li className="diagnose-step" data-status={step.status} data-testid="diagnose-step">
      <h4>
        {index + 1}. {step.title}{' '}
        <span className={`step-status ${status.className}`} data-testid="diagnose-step-status">
          {status.text}
        </span>
        {step.durationMs !== null && <span className="muted step-duration"> {durationText(step.durationMs)}</span>}
      </h4>
      {step.why && (
        <p className="step-why">
          <span className="step-label">Why</span> <Prose text={step.why} />
        </p>
      )}
      {step.argv.length > 0 && (
        <p className="step-ran">
          <span className="step-label">Ran</span> <CommandWords argv={step.argv} env={step.envChanges} />
        </p>
      )}
      {step.findings.length > 0 && (
        <ul className="step-findings" aria-label={`What step ${index + 1} found`}>
          {step.findings.map((f, i) => (
            <li key={i}>
              <Prose text={f} />
            </li>
          ))}
        </ul>
      )}
      {output && (live || output.text) && (
        <details className="step-output" open={live || undefined} data-testid="diagnose-step-output">
          <summary>
            The program’s output{output.text ? ` (${plural(lines, 'line')})` : ': nothing yet'}
            {step.status === 'running' ? ', as it comes' : ''}
          </summary>
          {dropped && <p className="muted">{dropped}</p>}
          {output.text && <OutputPre text={output.text} label={`The program’s output in step ${index + 1}`} />}
        </details>
      )}
    </li>
  );
}

/** The evidence chain: each step with what ran, why, how long, what it found, and the program's output. */
export function DiagnoseSteps({ steps, outputs, live = false }: { steps: DiagnosisStep[]; outputs: (StepOutput | null)[]; live?: boolean }) {
  return (
    <ol className="diagnose-steps" aria-label="Steps">
      {steps.map((step, i) => (
        <Step key={i} step={step} index={i} output={outputs[i] ?? null} live={live && step.kind !== 'environment'} />
      ))}
    </ol>
  );
}
