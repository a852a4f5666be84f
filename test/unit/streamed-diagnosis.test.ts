import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  DIAGNOSE_PROGRAMS_OFF,
  durationText,
  environmentChecksText,
  offeredText,
  oomPictureText,
  ranText,
  reportOriginText,
} from '../../core/diagnose/diagnosis-view-text';
import type { DiagnosisReport, DiagnosisStep } from '../../core/diagnose/report';
import { STEP_TITLES } from '../../core/diagnose/report';
import {
  appendOutput,
  applyDiagnoseEvent,
  cancelledReport,
  droppedOutputNote,
  startStreamed,
  stepAnnouncement,
  stepRuns,
  type StreamedDiagnosis,
} from '../../core/diagnose/streamed-diagnosis';

const ROOT = join(__dirname, '../../..');
const FIXTURES = join(ROOT, 'test/fixtures/diagnoses');
const fixture = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as DiagnosisReport;

const PROGRAM = { argv: ['python3', 'sleep.py'], cwd: '/tmp/x', envChanges: {}, thorough: false };
const step = (kind: DiagnosisStep['kind'], status: DiagnosisStep['status'], findings: string[] = []): DiagnosisStep => ({
  kind,
  title: STEP_TITLES[kind],
  why: 'because',
  rule: null,
  argv: kind === 'environment' ? [] : PROGRAM.argv,
  envChanges: kind === 'blocking' ? { CUDA_LAUNCH_BLOCKING: '1' } : {},
  status,
  durationMs: status === 'running' ? null : 12,
  findings,
});

/** A diagnosis streamed up to a step under way of `kind`, with output in it. */
function streamedUpTo(kind: 'environment' | 'as-is' | 'blocking'): StreamedDiagnosis {
  let d = startStreamed(PROGRAM, 600_000, '2025-01-01T00:00:00.000Z');
  d = applyDiagnoseEvent(d, { kind: 'step-started', index: 0, step: step('environment', 'running') }, 1000);
  if (kind === 'environment') return d;
  d = applyDiagnoseEvent(d, { kind: 'step-finished', index: 0, step: step('environment', 'done', ['Python 3.12.']) }, 1100);
  d = applyDiagnoseEvent(d, { kind: 'step-started', index: 1, step: step('as-is', 'running') }, 1100);
  d = applyDiagnoseEvent(d, { kind: 'output', index: 1, stream: 'stdout', text: 'waiting\n' }, 1200);
  if (kind === 'as-is') return d;
  d = applyDiagnoseEvent(d, { kind: 'step-finished', index: 1, step: step('as-is', 'done', ['CUDA_ERROR_ASSERT (710) — it exited with code 1.']) }, 1300);
  return applyDiagnoseEvent(d, { kind: 'step-started', index: 2, step: step('blocking', 'running') }, 1300);
}

test('streamed output: kept whole within the bound; past it, the tail from a line start, with how much was cut', () => {
  let out = appendOutput(undefined, 'one\n');
  out = appendOutput(out, 'two\n');
  assert.deepEqual(out, { text: 'one\ntwo\n', droppedChars: 0 });
  let long = appendOutput(undefined, '', 100);
  for (let i = 0; i < 100; i++) long = appendOutput(long, `line ${i}\n`, 100);
  assert.ok(long.text.length <= 125, `${long.text.length} characters kept`);
  assert.ok(long.text.startsWith('line '), long.text.slice(0, 20));
  assert.ok(long.text.endsWith('line 99\n'));
  assert.equal(long.droppedChars + long.text.length, Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join('').length);
  assert.match(droppedOutputNote(long.droppedChars)!, /^The first [\d,]+ characters of this output are not kept: the last part is shown\.$/);
  assert.equal(droppedOutputNote(0), null);
});

test('events: steps by index as they start and finish, output by step, and a polite line for each step (none for output)', () => {
  const d = streamedUpTo('blocking');
  assert.deepEqual(
    d.steps.map((s) => [s.kind, s.status]),
    [
      ['environment', 'done'],
      ['as-is', 'done'],
      ['blocking', 'running'],
    ],
  );
  assert.equal(d.output[1]!.text, 'waiting\n');
  assert.equal(d.output[2]!.text, '');
  assert.deepEqual(d.stepStartedMs, [1000, 1100, 1300]);
  assert.equal(stepAnnouncement({ kind: 'step-started', index: 1, step: step('as-is', 'running') }), 'Step 2 started: Run it as it is.');
  assert.equal(stepAnnouncement({ kind: 'step-finished', index: 1, step: step('as-is', 'done') }), 'Step 2 finished, in 12 ms: Run it as it is.');
  assert.equal(
    stepAnnouncement({ kind: 'step-finished', index: 3, step: step('memcheck', 'could-not-run') }),
    'Step 4 could not run, in 12 ms: Re-run under compute-sanitizer memcheck.',
  );
  assert.equal(stepAnnouncement({ kind: 'output', index: 1, stream: 'stderr', text: 'x' }), null);
  // A step finished earlier that says more (the Python probe's answer while step 2 runs): the line stays step 2's.
  const live = { steps: [step('environment', 'done'), step('as-is', 'running')] };
  assert.equal(stepAnnouncement({ kind: 'step-finished', index: 0, step: step('environment', 'done') }, live), null);
  assert.equal(stepAnnouncement({ kind: 'step-finished', index: 1, step: step('as-is', 'done') }, live), 'Step 2 finished, in 12 ms: Run it as it is.');
});

test('cancelled in the first run: the host’s own “did not finish” verdict, judged from that run; the step says it was stopped', () => {
  const r = cancelledReport(streamedUpTo('as-is'), 1600, 600);
  assert.equal(r.verdict.kind, 'stopped');
  assert.equal(r.verdict.sentence, 'The diagnosis did not finish: the program was stopped: cancelled.');
  assert.equal(r.steps[1]!.status, 'done');
  assert.equal(r.steps[1]!.durationMs, 500);
  assert.deepEqual(r.steps[1]!.findings, ['stopped: cancelled.', 'Took 500 ms.']);
  assert.equal(r.evidence.runs[0]!.output, 'waiting\n');
  assert.equal(r.evidence.runs[0]!.exit.cancelled, true);
  assert.equal(r.durationMs, 600);
  assert.deepEqual(stepRuns(r), [null, r.evidence.runs[0]]);
});

test('cancelled later, or before the first run: where it stopped, and what the first run had found', () => {
  const later = cancelledReport(streamedUpTo('blocking'), 2000, 1000);
  assert.equal(later.verdict.sentence, 'The diagnosis did not finish: it was cancelled during step 3, “Re-run with CUDA_LAUNCH_BLOCKING=1”.');
  assert.match(later.verdict.cause, /^The first run had ended \(CUDA_ERROR_ASSERT \(710\) — it exited with code 1\); what each step found/);
  assert.deepEqual(later.steps[2]!.findings, ['stopped: cancelled.', 'Took 700 ms.']);
  assert.deepEqual(later.evidence.runs, []);
  const early = cancelledReport(streamedUpTo('environment'), 1050, 50);
  assert.equal(early.verdict.sentence, 'The diagnosis did not finish: it was cancelled during step 1, “The environment as the program will see it”.');
  assert.equal(early.verdict.cause, 'Nothing was found before it stopped.');
  assert.deepEqual(early.steps[0]!.findings, ['Cancelled before it finished.']);
  const none = cancelledReport(startStreamed(PROGRAM, 1000, '2025-01-01T00:00:00.000Z'), 0, 0);
  assert.equal(none.verdict.sentence, 'The diagnosis did not finish: it was cancelled before its first step.');
});

test('every recorded report: each step that ran has its run, in order, by kind', () => {
  for (const name of readdirSync(FIXTURES).filter((f) => f.endsWith('.json'))) {
    const r = fixture(name);
    const runs = stepRuns(r);
    assert.equal(runs.filter(Boolean).length, r.evidence.runs.length, name);
    r.steps.forEach((s, i) => assert.equal(runs[i]?.kind ?? null, s.kind === 'environment' || s.status === 'not-run' ? null : s.kind, `${name} step ${i}`));
  }
});

test('the view’s sentences: origin, offered passes, the environment’s checks, the allocator’s picture, programs off', () => {
  assert.equal(reportOriginText({ kind: 'file', path: '/r/a.json' }), 'Opened from /r/a.json: read, never run.');
  assert.match(reportOriginText({ kind: 'cancelled' }), /^Cancelled: the program was stopped/);
  assert.equal(offeredText([]), null);
  assert.match(offeredText(['memcheck', 'racecheck', 'initcheck'])!, /not run: memcheck, racecheck and initcheck\. Tick “Run the sanitizer passes/);
  assert.match(offeredText(['memcheck'])!, /not run: memcheck\. /);
  assert.match(offeredText(['memcheck'], true)!, /not run: memcheck\. Run them now for this program, as it ran\.$/);
  assert.equal(environmentChecksText(fixture('pytorch-device-assert.json')), 'No check of the program’s environment warned or failed.');
  assert.equal(environmentChecksText(fixture('cuda-visible-devices.json')), null);
  const picture = fixture('pytorch-oom-too-large.json').evidence.runs[1]!.oomPicture!;
  assert.equal(
    oomPictureText(picture),
    'It asked for 63.34 GiB; PyTorch held 63.34 GiB in tensors of 63.34 GiB reserved; 0 B was free in its cache. Alive at the failure, by the line that allocated it: 2 lines.',
  );
  assert.equal(oomPictureText({ ...picture, missing: 'the shim could not arm.' }), 'No allocator history: the shim could not arm.');
  assert.match(DIAGNOSE_PROGRAMS_OFF, /started without `--allow-programs`.*gpu-workbench diagnose -- <command>/);
});

test('times as a person reads them: ms under a second, then seconds, then minutes; when it ran, against its budget', () => {
  assert.equal(durationText(176.28), '176 ms');
  assert.equal(durationText(6807.277), '6.8 s');
  assert.equal(durationText(600_000), '10 min');
  assert.equal(durationText(90_500), '1 min 31 s');
  assert.equal(ranText(fixture('pytorch-device-assert.json')), 'Started 2026-11-27 03:10:38 UTC; took 9.4 s of a 10 min budget.');
  assert.match(
    ranText({ ...fixture('ctypes-leak.json'), program: { ...fixture('ctypes-leak.json').program, thorough: true } }),
    /, with the sanitizer passes after a clean exit\.$/,
  );
});
