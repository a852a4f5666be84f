import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { MAX_RESULT_FILE_BYTES } from '../../core/limits';
import { MAX_RUN_EVENTS, MAX_RUN_GPU_TIMES, type RunLogEvent } from '../../core/runner/event-log';
import { RunEventRecorder } from '../../core/runner/event-recorder';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { PlanFileError, readRunOutcome, writeResultFile } from '../../main/services/plan-files';
import { ROOT } from '../helpers/cli';

const dir = mkdtempSync(join(tmpdir(), 'wb-result-events-'));
/** A run recorded on a GPU before the event log existed. */
const olderText = readFileSync(join(ROOT, 'test/fixtures/legacy/never-frees.before-event-log.json'), 'utf8');
const older = () => JSON.parse(olderText) as RunOutcome;

/** The never-frees run with the log such a run makes: allocs, uploads, a launch, a read-back, teardown frees. */
function withEvents(): RunOutcome {
  let now = 100;
  const log = new RunEventRecorder(() => now, 100);
  const call = (record: () => void) => {
    log.begin();
    now += 0.25;
    record();
  };
  log.phase = 'load';
  call(() => log.moduleLoad('add', 5123));
  log.phase = 'run';
  ['a', 'b', 'c'].forEach((name, i) => {
    log.step = i;
    call(() => log.alloc(name, `0x7f00000${i}0100`, 4_194_304, 4_194_816));
  });
  log.step = 3;
  call(() => log.copy('HtoD', 'a', 4_194_304, 'data'));
  log.step = 5;
  call(() => log.launch('add', 'vecAdd', [4096, 1, 1], [256, 1, 1], 0, [{ startMs: 1.5, endMs: 1.52 }]));
  call(() => log.copy('DtoH', null, 1536, 'guards'));
  log.step = 6;
  call(() => log.copy('DtoH', 'c', 4_194_304, 'data'));
  log.phase = 'teardown';
  log.step = null;
  ['a', 'b', 'c'].forEach((name, i) => call(() => log.free(name, `0x7f00000${i}0100`, 4_194_304, 4_194_816)));
  const outcome = older();
  outcome.result = { ...outcome.result!, startedAtMs: 1_780_000_000_000, ...log.finish() };
  return outcome;
}

async function refusal(outcome: unknown, name: string): Promise<string> {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, typeof outcome === 'string' ? outcome : JSON.stringify(outcome));
  const error = await readRunOutcome(path).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(error instanceof PlanFileError, `${name} was opened`);
  return error.message;
}

test('a result saved before the event log existed still opens', async () => {
  const path = join(dir, 'older.json');
  writeFileSync(path, olderText);
  const outcome = await readRunOutcome(path);
  assert.equal(outcome.result!.events, undefined);
  assert.deepEqual(outcome.result!.leaks, older().result!.leaks);
});

test('a result with its event log is saved one line an event and opens again unchanged', async () => {
  const outcome = withEvents();
  const path = join(dir, 'with-events.json');
  await writeResultFile(path, outcome);
  const text = readFileSync(path, 'utf8');
  const firstAlloc = outcome.result!.events!.find((e) => e.kind === 'alloc')!;
  assert.ok(text.split('\n').some((line) => line.trim() === JSON.stringify(firstAlloc) + ','));
  assert.deepEqual(await readRunOutcome(path), JSON.parse(JSON.stringify(outcome)));
});

test('hostile event logs are refused with what is wrong, never drawn', async () => {
  const withEvent = (patch: (events: RunLogEvent[]) => unknown) => {
    const outcome = withEvents() as unknown as { result: Record<string, unknown> & { events: RunLogEvent[] } };
    outcome.result.events = patch(outcome.result.events) as RunLogEvent[];
    return outcome;
  };
  const alloc = (events: RunLogEvent[]) => events.find((e) => e.kind === 'alloc') as unknown as Record<string, unknown>;
  const launch = (events: RunLogEvent[]) => events.find((e) => e.kind === 'launch') as unknown as Record<string, unknown>;
  const cases: [string, unknown, RegExp][] = [
    ['not a list', withEvent(() => ({ 0: 'x' })), /result\.events/],
    ['an unknown kind', withEvent((e) => [...e, { ...e[0], kind: 'format-disk' }]), /result\.events\.\d+\.kind/],
    ['an unknown phase', withEvent((e) => (Object.assign(e[1]!, { phase: 'later' }), e)), /result\.events\.1\.phase/],
    ['a negative duration', withEvent((e) => (Object.assign(e[1]!, { dur: -1 }), e)), /result\.events\.1\.dur/],
    ['a size that is not a whole number', withEvent((e) => (Object.assign(alloc(e), { bytes: 1.5 }), e)), /bytes/],
    ['an address that is not hex', withEvent((e) => (Object.assign(alloc(e), { address: 'javascript:alert(1)' }), e)), /device address/],
    ['a name of a megabyte', withEvent((e) => (Object.assign(alloc(e), { buffer: 'x'.repeat(1 << 20) }), e)), /buffer/],
    ['a grid of two dimensions', withEvent((e) => (Object.assign(launch(e), { grid: [1, 1] }), e)), /grid/],
    ['a GPU time that is a string', withEvent((e) => (Object.assign(launch(e), { gpu: [{ startMs: '1', endMs: 2 }] }), e)), /gpu\.0\.startMs/],
    [
      'more GPU placements than any run keeps',
      withEvent((e) => (Object.assign(launch(e), { gpu: Array.from({ length: MAX_RUN_GPU_TIMES + 1 }, () => ({ startMs: 0, endMs: 1 })) }), e)),
      /gpu/,
    ],
    ['more events than any run keeps', withEvent((e) => Array.from({ length: MAX_RUN_EVENTS + 1 }, () => e[0])), /result\.events/],
  ];
  const negativeDropped = withEvents();
  Object.assign(negativeDropped.result!, { eventsDropped: -3 });
  cases.push(['a dropped count that is negative', negativeDropped, /result\.eventsDropped/]);
  const startedAsText = withEvents();
  Object.assign(startedAsText.result!, { startedAtMs: 'yesterday' });
  cases.push(['a start time that is text', startedAsText, /result\.startedAtMs/]);
  for (const [name, outcome, where] of cases) {
    const message = await refusal(outcome, name.replace(/\W+/g, '-'));
    assert.match(message, /is not a GPU Workbench run result that this version can read: /, name);
    assert.match(message, where, `${name}: ${message.slice(0, 300)}`);
    assert.ok(message.length < 2000, `${name}: the message stays short (${message.length} characters)`);
  }
  // 1e999 is valid JSON and parses to Infinity: not a time.
  const infinite = JSON.stringify(withEvents()).replace(/"dur":0\.25/, '"dur":1e999');
  assert.match(await refusal(infinite, 'infinite'), /result\.events\.0\.dur/);
});

test('a result with a full event log fits the result-file limit and opens again', async () => {
  let now = 0;
  const log = new RunEventRecorder(() => now, 0);
  for (let i = 0; log.events.length < MAX_RUN_EVENTS; i++) {
    log.step = i % 10_000;
    log.begin();
    now += 0.02;
    if (i % 2) log.launch('vector_add', 'vecAdd', [4096, 1, 1], [256, 1, 1], 0, [{ startMs: now - 0.01, endMs: now - 0.005 }]);
    else log.copy('HtoD', 'input_values', 4_194_304, 'data');
  }
  const outcome = older();
  outcome.result = { ...outcome.result!, startedAtMs: 1_780_000_000_000, ...log.finish() };
  const path = join(dir, 'full.json');
  await writeResultFile(path, outcome);
  const bytes = statSync(path).size;
  console.log(`# a result file with ${MAX_RUN_EVENTS} events: ${(bytes / 1e6).toFixed(1)} MB (limit ${MAX_RESULT_FILE_BYTES / 2 ** 20} MiB)`);
  assert.ok(bytes < MAX_RESULT_FILE_BYTES / 2, `${bytes} bytes`);
  const opened = await readRunOutcome(path);
  assert.equal(opened.result!.events!.length, MAX_RUN_EVENTS);
});
