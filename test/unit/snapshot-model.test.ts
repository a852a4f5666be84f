import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { chromeTraceChunks } from '../../core/memory/chrome-trace';
import {
  A,
  addressSpace,
  aliveAt,
  beforeRecording,
  buildSnapshotModel,
  describeFrame,
  isInternalFrame,
  MAX_TEXT,
  oomEvents,
  peakOf,
  SnapshotFormatError,
  summarize,
} from '../../core/memory/snapshot-model';
import { unpickle, type PickleValue } from '../../core/memory/unpickle';
import { validateChromeTrace } from '../helpers/chrome-trace';
import { ROOT } from '../helpers/cli';
import { sharedFilename } from '../helpers/hostile-pickles';

// Recorded with PyTorch 2.11 on an H100, from a script fed on stdin (so its frames say <stdin>):
// oom.pickle: 8 × 64 MiB allocated (line 4), every other one freed (line 5), then 10 TiB asked for (line 7);
// leak.pickle: the same process after empty_cache, 50 × torch.randn(1024, 1024) kept (line 16).
const H100 = join(ROOT, 'test/fixtures/snapshots/h100');
const model = (name: string) => buildSnapshotModel(unpickle(new Uint8Array(readFileSync(join(H100, name)))));
const MiB = 1024 ** 2;

test('oom.pickle: the OOM asked for 10 TiB with 78.41 GiB free, as the OutOfMemoryError said; PyTorch held 256 MiB, none of it cached', () => {
  const m = model('oom.pickle');
  const t = m.devices[0]!;
  const [oom, ...more] = oomEvents(m, t);
  assert.equal(more.length, 0);
  assert.equal(oom!.request, 10 * 1024 ** 4);
  assert.equal(oom!.deviceFree, 84_196_655_104);
  const message = readFileSync(join(H100, 'oom-message.txt'), 'utf8');
  const asked = Number(/Tried to allocate ([\d.]+) GiB/.exec(message)![1]);
  const free = Number(/of which ([\d.]+) GiB is free/.exec(message)![1]);
  assert.equal((oom!.request / 1024 ** 3).toFixed(2), asked.toFixed(2));
  assert.equal((oom!.deviceFree / 1024 ** 3).toFixed(2), free.toFixed(2));
  // "Of the allocated memory 256.00 MiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated."
  assert.equal(oom!.allocated, 256 * MiB);
  assert.equal(oom!.cachedFree, 0);
  assert.equal(describeFrame(oom!.userFrame), '<stdin>:7 <module>');
});

test('oom.pickle: the peak is 512 MiB at the eighth allocation, all eight alive and grouped under <stdin>:4', () => {
  const m = model('oom.pickle');
  const t = m.devices[0]!;
  const peak = peakOf(t);
  assert.equal(peak.bytes, 512 * MiB);
  assert.equal(peak.index, 15);
  assert.equal(peak.timeUs, 1_795_445_706_394_417);
  assert.equal(t.action[peak.index], A.alloc);
  const alive = aliveAt(m, t, peak.index);
  assert.equal(alive.length, 8);
  assert.ok(alive.every((a) => a.size === 64 * MiB && describeFrame(a.userFrame) === '<stdin>:4 <module>'));
  const [summary] = summarize(m);
  assert.deepEqual(
    summary!.peak.groups.map((g) => [describeFrame(g.frame), g.count, g.bytes]),
    [['<stdin>:4 <module>', 8, 512 * MiB]],
  );
  // After the frees and the OOM's cache flush: 4 × 64 MiB still allocated and reserved, nothing predates the recording.
  assert.equal(summary!.atEnd.allocations.length, 4);
  assert.equal(summary!.atEnd.reserved, 256 * MiB);
  assert.equal(summary!.beforeRecording.allocations.length, 0);
});

test('oom.pickle: frames and stacks are interned — 29 entries share 3 stacks, and every alloc has the same one', () => {
  const m = model('oom.pickle');
  const t = m.devices[0]!;
  assert.equal(m.stacks.length, 3);
  const allocStacks = new Set<number>();
  for (let i = 0; i < t.count; i++) if (t.action[i] === A.alloc) allocStacks.add(t.stack[i]!);
  assert.equal(allocStacks.size, 1);
  assert.equal(m.frames.filter((f) => f.filename === '<stdin>').length, 3, 'lines 4, 5 and 7, each one frame');
});

test('leak.pickle: 4 MiB more at every step; 50 allocations (200 MiB) alive at the end from <stdin>:16, and 4 × 64 MiB from before the recording', () => {
  const m = model('leak.pickle');
  const t = m.devices[0]!;
  const steps: number[] = [];
  let last = t.baseAllocated;
  for (let i = 0; i < t.count; i++) {
    if (t.action[i] !== A.alloc) continue;
    steps.push(t.allocated[i]! - last);
    last = t.allocated[i]!;
  }
  assert.equal(steps.length, 50);
  assert.ok(steps.every((s) => s === 4 * MiB));
  const end = aliveAt(m, t, t.count - 1);
  assert.equal(end.length, 50);
  assert.equal(
    end.reduce((s, a) => s + a.size, 0),
    200 * MiB,
  );
  assert.ok(end.every((a) => describeFrame(a.userFrame) === '<stdin>:16 <module>'));
  const before = beforeRecording(m, t);
  assert.equal(before.length, 4);
  assert.ok(before.every((a) => a.size === 64 * MiB && describeFrame(a.userFrame) === '<stdin>:4 <module>'));
  assert.equal(t.baseAllocated, 256 * MiB);
  assert.equal(peakOf(t).bytes, 456 * MiB);
  assert.equal(t.reserved[t.count - 1], 456 * MiB, '10 segments of 20 MiB made while recording + 4 of 64 MiB before');
  // 50 frame lists in the pickle (one per entry), all with the same frames: one stack here.
  const stacks = new Set<number>();
  for (let i = 0; i < t.count; i++) stacks.add(t.stack[i]!);
  assert.equal(stacks.size, 1);
});

test('the top user frame skips PyTorch, Python and C++ frames and prefers the user’s own file', () => {
  assert.equal(isInternalFrame({ filename: '/usr/lib/python3/site-packages/torch/nn/modules/linear.py', line: 125, name: 'forward' }), true);
  assert.equal(isInternalFrame({ filename: 'torch/nn/functional.py', line: 1, name: 'linear' }), true);
  assert.equal(isInternalFrame({ filename: '/root/.pyenv/versions/3.11.7/lib/python3.11/threading.py', line: 1, name: 'run' }), true);
  assert.equal(isInternalFrame({ filename: '??', line: 0, name: 'PyEval_EvalCode' }), true);
  assert.equal(isInternalFrame({ filename: 'CUDACachingAllocator.cpp', line: 0, name: 'malloc' }), true);
  assert.equal(isInternalFrame({ filename: '/home/me/train.py', line: 42, name: 'step' }), false);
  const frame = (filename: string, line: number, name: string) =>
    new Map<PickleValue, PickleValue>([
      ['filename', filename],
      ['line', line],
      ['name', name],
    ]);
  const frames = [
    frame('??', 0, 'torch::unwind'),
    frame('/x/site-packages/torch/nn/modules/linear.py', 125, 'forward'),
    frame('/home/me/train.py', 42, 'step'),
    frame('/home/me/main.py', 7, '<module>'),
  ];
  const snap = new Map<PickleValue, PickleValue>([
    ['segments', []],
    [
      'device_traces',
      [
        [
          new Map<PickleValue, PickleValue>([
            ['action', 'alloc'],
            ['addr', 4096],
            ['size', 512],
            ['stream', 0],
            ['time_us', 10],
            ['frames', frames],
          ]),
        ],
      ],
    ],
  ]);
  const m = buildSnapshotModel(snap);
  assert.equal(describeFrame(aliveAt(m, m.devices[0]!, 0)[0]!.userFrame), '/home/me/train.py:42 step');
});

test('frames sharing one 5 MiB filename cost no more for it: it is cut at 4,096 characters, and says so', () => {
  const m = buildSnapshotModel(unpickle(sharedFilename(1000, 5 * MiB)));
  assert.equal(m.frames.length, 1000);
  assert.deepEqual(
    m.frames.map((f) => f.line),
    Array.from({ length: 1000 }, (_, i) => i + 1),
  );
  for (const f of m.frames) assert.equal(f.filename, `${'f'.repeat(MAX_TEXT)}… (cut from 5,242,880 characters)`);
  // The review's shape, one 50 MiB filename in 5,000 frames, is refused before any model is built: what its memo
  // references stand for is past 1024 times the file.
  assert.throws(() => unpickle(sharedFilename(5000, 50 * MiB)), /references to values it already holds would expand it past 50\.\d+ GiB/);
});

test('a frame or setting made of shared lists (billion laughs) is no text, and only so much of it is copied', () => {
  let laughs: PickleValue = 'lol';
  for (let i = 0; i < 40; i++) laughs = [laughs, laughs];
  let wide: PickleValue = 'x';
  for (let i = 0; i < 4; i++) wide = new Array<PickleValue>(1000).fill(wide);
  const frame = new Map<PickleValue, PickleValue>([
    ['filename', laughs],
    ['line', 1],
    ['name', laughs],
  ]);
  const entry = new Map<PickleValue, PickleValue>([
    ['action', laughs],
    ['frames', [frame]],
  ]);
  const m = buildSnapshotModel(
    new Map<PickleValue, PickleValue>([
      ['device_traces', [[entry]]],
      ['allocator_settings', new Map<PickleValue, PickleValue>([[laughs, wide]])],
    ]),
  );
  assert.deepEqual(m.frames[0], { filename: '', line: 1, name: '' });
  assert.equal(m.devices[0]!.action[0], A.other);
  assert.ok(JSON.stringify(m.allocatorSettings).length < 100_000);
});

test('address space: blocks and the gaps between them, from the segments', () => {
  const m = buildSnapshotModel(unpickle(new Uint8Array(readFileSync(join(ROOT, 'test/fixtures/pickles/snapshot-p4.pickle')))));
  const [segment] = addressSpace(m);
  assert.deepEqual(
    segment!.parts.map((p) => [p.kind, p.size]),
    [
      ['used', 4 * MiB],
      ['gap', 16 * MiB],
    ],
  );
  assert.equal(segment!.parts[1]!.address, segment!.address + 4 * MiB);
  assert.equal(segment!.largestGap, 16 * MiB);
});

test('what is not a snapshot is said so', () => {
  assert.throws(() => buildSnapshotModel([1, 2]), SnapshotFormatError);
  assert.throws(() => buildSnapshotModel(new Map([['weights', 1]])), /neither "device_traces" nor "segments"/);
  assert.throws(() => buildSnapshotModel(new Map<PickleValue, PickleValue>([['device_traces', [[7]]]])), /Trace entry 0 of device 0 is not a dict/);
  // A device number sizes the per-device tables: a billion is refused, not allocated for.
  const segment = (device: number) =>
    new Map<PickleValue, PickleValue>([
      ['device', device],
      ['address', 0],
      ['total_size', 0],
      ['blocks', []],
    ]);
  assert.throws(() => buildSnapshotModel(new Map<PickleValue, PickleValue>([['segments', [segment(1e9)]]])), /names device 1000000000: .* 0 to 1023/);
  assert.throws(() => buildSnapshotModel(new Map<PickleValue, PickleValue>([['segments', [segment(-1)]]])), SnapshotFormatError);
  assert.equal(buildSnapshotModel(new Map<PickleValue, PickleValue>([['segments', [segment(3)]]])).devices.length, 4);
});

test('the Chrome trace of oom.pickle is valid trace JSON: counters, 8 allocation spans, the OOM instant, names', () => {
  const m = model('oom.pickle');
  const text = [...chromeTraceChunks(m, { chunkChars: 512 })].join('');
  const events = validateChromeTrace(text);
  assert.equal(events.get('X')!.length, 8);
  assert.equal(events.get('X')!.filter((e) => e.args?.['alive_at_end'] === true).length, 4);
  assert.equal(events.get('i')!.length, 1);
  assert.match(events.get('i')![0]!.name, /^OOM: asked for 10 TiB, 78\.41 GiB free$/);
  const counters = events.get('C')!;
  assert.equal(Math.max(...counters.map((c) => c.args!['allocated'] as number)), 512 * MiB);
  assert.ok(events.get('M')!.some((e) => e.name === 'process_name' && e.args!['name'] === 'cuda:0 (PyTorch caching allocator)'));
});
