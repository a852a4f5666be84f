import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { MemoryOpenEvent, MemoryOpenResult } from '../../core/memory/memory-open';
import { decodeTimeline } from '../../core/memory/timeline-wire';
import { createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { createWorkbench } from '../../main/workbench';
import { ROOT } from '../helpers/cli';
import { MiB, recordedRun, withEventLog } from '../helpers/run-log';

// memory.open through the host's boundary (dispatch validates the request, the handler reads the file in the snapshot
// worker): the recorded H100 snapshots, saved run results, and files that must be refused in words.
const dir = mkdtempSync(join(tmpdir(), 'wb-memory-open-'));
process.env['GPU_WORKBENCH_STATE_DIR'] = join(dir, 'state');
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
const handlers = createHandlers(workbench, 'serve');
after(() => {
  workbench.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const H100 = join(ROOT, 'test/fixtures/snapshots/h100');
const PICKLES = join(ROOT, 'test/fixtures/pickles');
type Reply = { ok: boolean; value?: MemoryOpenResult; error?: { code: string; message: string } };

async function open(path: string, signal = new AbortController().signal): Promise<Reply & { events: MemoryOpenEvent[] }> {
  const events: MemoryOpenEvent[] = [];
  const reply = (await dispatch(handlers, 'memory.open', { path }, { signal, emit: (e) => events.push(e as MemoryOpenEvent) })) as Reply;
  return { ...reply, events };
}

test('memory.open on oom.pickle: one timeline per device with data, decoded whole, with its summary; phases streamed', async () => {
  const r = await open(join(H100, 'oom.pickle'));
  assert.equal(r.ok, true, r.error?.message);
  const v = r.value!;
  assert.equal(v.kind, 'snapshot');
  assert.equal(v.timelines.length, 1);
  const t = decodeTimeline(v.timelines[0]);
  assert.equal(t.title, 'cuda:0 · PyTorch memory snapshot · oom.pickle');
  assert.equal(t.allocations.count, 8);
  assert.equal(v.summary[0]!.peak!.bytes, 512 * MiB);
  assert.equal(v.summary[0]!.ooms[0]!.marker.label, 'out of memory: asked 10 TiB, 78.41 GiB free');
  assert.equal(v.summary[0]!.ooms[0]!.holders[0]!.count, 4);
  assert.equal(v.timings.bytes, 9105);
  assert.deepEqual(
    r.events.map((e) => e.phase),
    ['read', 'parse', 'model', 'timeline'],
  );
});

test('memory.open on a saved run result with an event log, and on an older one with allocation records only', async () => {
  const run = withEventLog(recordedRun('never-frees'), [
    { op: 'alloc', buffer: 'a', address: '0x7f3a01e00100', bytes: 4 * MiB },
    { op: 'alloc', buffer: 'b', address: '0x7f3a02e00100', bytes: 4 * MiB },
  ]);
  const file = join(dir, 'never-frees-with-log.json');
  writeFileSync(file, JSON.stringify({ status: 'ok', diagnosis: { kind: 'leak' }, compile: [], result: run }, null, 2));
  let r = await open(file);
  assert.equal(r.ok, true, r.error?.message);
  assert.equal(r.value!.kind, 'run');
  const t = decodeTimeline(r.value!.timelines[0]);
  assert.match(t.title, /^never-frees-with-log\.json · NVIDIA H100 80GB HBM3 \(cuda:0\)$/);
  assert.equal(t.allocations.count, 2);
  assert.equal(r.value!.summary[0]!.leaks.count, 2);

  r = await open(join(ROOT, 'test/fixtures/runs/divergent-barrier.json'));
  assert.equal(r.ok, true, r.error?.message);
  assert.match(r.value!.notes[0]!, /saved before the workbench recorded an event log/);
  assert.match(decodeTimeline(r.value!.timelines[0]).title, /not to time/);
});

test('files memory.open refuses, each in words with its own code: hostile pickles, no timeline, not a result, not a file', async () => {
  const notAResult = join(dir, 'plan.json');
  writeFileSync(notAResult, JSON.stringify({ version: 1, kernels: [] }));
  const badEvents = join(dir, 'bad-events.json');
  const run = recordedRun('never-frees');
  writeFileSync(
    badEvents,
    JSON.stringify({
      ...run,
      startedAtMs: 1,
      events: [{ kind: 'alloc', t: 0, dur: 0, step: 0, phase: 'run', buffer: 'a', address: '0x1', bytes: -5, allocatedBytes: 0 }],
    }),
  );
  const brokenJson = join(dir, 'broken.json');
  writeFileSync(brokenJson, '{"status": ');
  const cases: [string, string, RegExp][] = [
    [join(PICKLES, 'evil-reduce.pickle'), 'MEMORY_REFUSED', /evil-reduce\.pickle was refused: The pickle asks to run code/],
    [join(PICKLES, 'truncated.pickle'), 'MEMORY_REFUSED', /ends early|ends inside/],
    [join(ROOT, 'test/fixtures/legacy/device-assert.before-memory-records.json'), 'MEMORY_NO_TIMELINE', /no event log and no allocation records/],
    [
      join(ROOT, 'test/fixtures/runs/static-shared-too-large.json'),
      'MEMORY_NO_TIMELINE',
      /holds no record of a run on the device \(its status is "compile-error"\)/,
    ],
    [notAResult, 'MEMORY_NOT_A_RESULT', /not a run result saved by the workbench/],
    [badEvents, 'MEMORY_NOT_A_RESULT', /cannot be drawn as a memory timeline: events\.0\.bytes/],
    [brokenJson, 'MEMORY_NOT_A_RESULT', /starts like JSON but is not valid JSON/],
    ['/dev/zero', 'MEMORY_UNREADABLE', /not a regular file/],
    [join(dir, 'missing.pickle'), 'MEMORY_UNREADABLE', /cannot be read \(ENOENT\): it does not exist/],
    [dir, 'MEMORY_UNREADABLE', /is a folder/],
  ];
  for (const [path, code, message] of cases) {
    const r = await open(path);
    assert.equal(r.ok, false, path);
    assert.equal(r.error!.code, code, `${path}: ${r.error!.message}`);
    assert.match(r.error!.message, message, path);
    assert.doesNotMatch(r.error!.message, /at .*\.js:\d+/, 'no stack trace');
  }
  const bad = (await dispatch(handlers, 'memory.open', { path: '' })) as Reply;
  assert.equal(bad.error!.code, 'BAD_REQUEST');
});

test('a cancelled memory.open stops its reader and answers CANCELLED', async () => {
  const controller = new AbortController();
  const pending = open(join(H100, 'leak.pickle'), controller.signal);
  controller.abort();
  const r = await pending;
  assert.equal(r.ok, false);
  assert.equal(r.error!.code, 'CANCELLED');
});
