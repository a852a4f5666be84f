import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { snapshotTimelines } from '../../core/memory/memory-open';
import { buildSnapshotModel, peakOf as snapshotPeak, summarize } from '../../core/memory/snapshot-model';
import { BEFORE_RECORDING, timelineFromSnapshot } from '../../core/memory/snapshot-timeline';
import { compareTimelines } from '../../core/memory/timeline-compare';
import { aliveAt, aliveAtEnd, groupAllocations, leaksOf, peakOf, sumBytes, summarizeTimeline } from '../../core/memory/timeline-model';
import { decodeTimeline, encodeTimeline } from '../../core/memory/timeline-wire';
import { unpickle, type PickleValue } from '../../core/memory/unpickle';
import { ROOT } from '../helpers/cli';

// Recorded with PyTorch 2.11 on an H100 (see snapshot-model.test.ts): oom.pickle allocates 8 × 64 MiB (line 4), frees
// every other one (line 5) and asks for 10 TiB (line 7); leak.pickle, the same process later, keeps 50 × 4 MiB (line 16).
const H100 = join(ROOT, 'test/fixtures/snapshots/h100');
const model = (name: string) => buildSnapshotModel(unpickle(new Uint8Array(readFileSync(join(H100, name)))));
const MiB = 1024 ** 2;

test('oom.pickle: 8 allocations from alloc to free_completed, 4 alive at the end, on the trace’s own clock', () => {
  const m = model('oom.pickle');
  const t = timelineFromSnapshot(m, 0, { name: 'oom.pickle' });
  const trace = m.devices[0]!;
  assert.equal(t.source, 'snapshot');
  assert.equal(t.title, 'cuda:0 · PyTorch memory snapshot · oom.pickle');
  assert.equal(t.originUs, trace.time[0]);
  assert.equal(t.durationUs, trace.time[trace.count - 1]! - trace.time[0]!);
  assert.equal(t.allocations.count, 8);
  assert.ok([...t.allocations.size].every((s) => s === 64 * MiB));
  assert.deepEqual(
    [...t.allocations.end].map((e) => e === Infinity),
    [false, true, false, true, false, true, false, true],
  );
  assert.ok([...t.allocations.label].every((l) => l === t.labels.indexOf(BEFORE_RECORDING) || l === -1));
  assert.equal(aliveAtEnd(t).length, 4);
  // The same peak as the snapshot model's, at the same moment.
  const peak = peakOf(t)!;
  assert.equal(peak.bytes, snapshotPeak(trace).bytes);
  assert.equal(peak.timeUs + t.originUs, snapshotPeak(trace).timeUs);
  assert.equal(peak.allocations, 8);
  assert.deepEqual(
    t.counters.map((c) => [c.id, c.group, Math.max(...c.value)]),
    [
      ['snapshot:0:allocated', 'allocated', 512 * MiB],
      ['snapshot:0:reserved', 'reserved', 512 * MiB],
    ],
  );
});

test('oom.pickle markers: the OOM against device free with the holders by user frame, the leak group, the peak', () => {
  const t = timelineFromSnapshot(model('oom.pickle'), 0);
  assert.deepEqual(
    t.markers.map((m) => m.kind),
    ['peak', 'oom', 'leak'],
  );
  const oom = t.markers.find((m) => m.kind === 'oom')!;
  assert.equal(oom.label, 'out of memory: asked 10 TiB, 78.41 GiB free');
  assert.match(oom.detail, /Asked for 10 TiB at <stdin>:7 <module> with 78\.41 GiB free on the device \(131× what was free\)\./);
  assert.match(oom.detail, /PyTorch held 256 MiB allocated and 256 MiB reserved \(0 B cached and unused\)\./);
  assert.match(oom.detail, /What held memory then, by user frame:\n {2}256 MiB in 4 blocks \(up to 64 MiB\) from <stdin>:4 <module>/);
  const holders = groupAllocations(t, aliveAt(t, oom.timeUs));
  assert.deepEqual(
    holders.map((g) => [g.title, g.count, g.bytes]),
    [['<stdin>:4 <module>', 4, 256 * MiB]],
  );
  const leak = t.markers.find((m) => m.kind === 'leak')!;
  assert.equal(leak.label, 'alive at the end: 256 MiB in 4 blocks from <stdin>:4 <module>');
  assert.equal(leak.timeUs, t.durationUs);
  assert.ok(t.allocations.end[leak.allocation!] === Infinity);
  assert.equal(t.markers.find((m) => m.kind === 'peak')!.label, 'peak: 512 MiB in 8 blocks');
});

test('oom.pickle stacks stay shared: one stack for all eight allocations, its frames the same objects as the model’s frames', () => {
  const m = model('oom.pickle');
  const t = timelineFromSnapshot(m, 0);
  assert.ok(t.stacks.length <= m.stacks.length);
  assert.equal(new Set(t.allocations.stack).size, 1);
  const stack = t.stacks[t.allocations.stack[0]!]!;
  assert.deepEqual(stack.frames[stack.userFrame], { file: '<stdin>', line: 4, name: '<module>' });
  // The same frame in two stacks is one object.
  const seen = new Map<string, object>();
  for (const s of t.stacks)
    for (const f of s.frames) {
      const key = `${f.file}:${f.line}:${f.name}`;
      if (seen.has(key)) assert.equal(seen.get(key), f);
      else seen.set(key, f);
    }
});

test('leak.pickle: 50 blocks from <stdin>:16 alive at the end, and 4 × 64 MiB from before the recording alive from 0', () => {
  const m = model('leak.pickle');
  const t = timelineFromSnapshot(m, 0);
  const before = t.labels.indexOf(BEFORE_RECORDING);
  const early = [...t.allocations.label.keys()].filter((i) => t.allocations.label[i] === before);
  assert.equal(early.length, 4);
  assert.ok(early.every((i) => t.allocations.start[i] === 0 && t.allocations.end[i] === Infinity && t.allocations.size[i] === 64 * MiB));
  assert.equal(peakOf(t)!.bytes, 456 * MiB);
  assert.equal(t.counters[0]!.value[0], 256 * MiB, 'allocated starts at what predates the recording');
  const leaks = t.markers.filter((m) => m.kind === 'leak');
  assert.deepEqual(
    leaks.map((l) => l.label),
    ['alive at the end: 200 MiB in 50 blocks from <stdin>:16 <module>'],
    'blocks from before the recording are not called leaks of it',
  );
  assert.equal(leaksOf(t).length, 54);
  assert.equal(sumBytes(t, aliveAtEnd(t)), 456 * MiB);
  // The timeline's summary agrees with the snapshot model's.
  const [modelSummary] = summarize(m);
  const s = summarizeTimeline(t);
  assert.equal(s.peak!.bytes, modelSummary!.peak.bytes);
  assert.equal(s.atEnd.count, modelSummary!.atEnd.allocations.length + modelSummary!.beforeRecording.allocations.length);
});

test('a block freed during the recording that it never allocated: alive from 0 to its free', () => {
  const entry = (action: string, addr: number, size: number, time: number) =>
    new Map<PickleValue, PickleValue>([
      ['action', action],
      ['addr', addr],
      ['size', size],
      ['stream', 0],
      ['time_us', time],
    ]);
  const m = buildSnapshotModel(
    new Map<PickleValue, PickleValue>([
      ['segments', []],
      ['device_traces', [[entry('alloc', 0x2000, 100, 1000), entry('free_completed', 0x1000, 300, 1005), entry('free_completed', 0x2000, 100, 1010)]]],
    ]),
  );
  const t = timelineFromSnapshot(m, 0);
  assert.equal(t.allocations.count, 2);
  assert.deepEqual([...t.allocations.start], [0, 0]);
  assert.deepEqual([...t.allocations.end], [5, 10]);
  assert.equal(t.labels[t.allocations.label[0]!], BEFORE_RECORDING);
  assert.deepEqual(peakOf(t), { bytes: 400, timeUs: 0, allocations: 2 });
  assert.equal(t.markers.filter((m) => m.kind === 'leak').length, 0);
});

test('a trace without times (older PyTorch): its entries in order, one a microsecond, and the title says so', () => {
  const entry = (action: string, addr: number, size: number) =>
    new Map<PickleValue, PickleValue>([
      ['action', action],
      ['addr', addr],
      ['size', size],
    ]);
  const m = buildSnapshotModel(
    new Map<PickleValue, PickleValue>([['device_traces', [[entry('alloc', 0x1000, 10), entry('alloc', 0x2000, 20), entry('free_completed', 0x1000, 10)]]]]),
  );
  const t = timelineFromSnapshot(m, 0);
  assert.match(t.title, /the trace has no times: its entries in order, not to time/);
  assert.deepEqual([...t.allocations.start], [0, 1]);
  assert.deepEqual([...t.allocations.end], [2, Infinity]);
  assert.deepEqual(peakOf(t), { bytes: 30, timeUs: 1, allocations: 2 });
  assert.doesNotThrow(() => decodeTimeline(structuredClone(encodeTimeline(t))));
});

test('an empty device is not a timeline; one with no such device is refused', () => {
  const m = buildSnapshotModel(new Map<PickleValue, PickleValue>([['device_traces', [[], []]]]));
  assert.equal(snapshotTimelines(m).length, 0);
  assert.throws(() => timelineFromSnapshot(m, 5), /no device 5 \(it has 2\)/);
});

test('compare oom.pickle with leak.pickle (the same process, later): the 50 new blocks from <stdin>:16, the 4 kept ones matched', () => {
  const a = timelineFromSnapshot(model('oom.pickle'), 0);
  const b = timelineFromSnapshot(model('leak.pickle'), 0);
  const c = compareTimelines(a, b);
  assert.deepEqual(c.peak, { a: 512 * MiB, b: 456 * MiB, diff: -56 * MiB, aTimeUs: peakOf(a)!.timeUs, bTimeUs: peakOf(b)!.timeUs });
  assert.deepEqual(c.atEnd, { a: { count: 4, bytes: 256 * MiB }, b: { count: 54, bytes: 456 * MiB } });
  assert.equal(c.newInB.count, 50);
  assert.equal(c.newInB.bytes, 200 * MiB);
  assert.deepEqual(
    c.newInB.groups.map((g) => [g.title, g.count]),
    [['<stdin>:16 <module>', 50]],
  );
  assert.equal(c.goneFromA.count, 0, 'the four 64 MiB blocks alive at the end of a are the ones b found from before its recording');
  assert.deepEqual(
    c.growth.map((g) => [g.title, g.bytes, g.count]),
    [['<stdin>:16 <module>', 200 * MiB, 50]],
  );
  // The other way round: b's new blocks are gone, nothing is new.
  const back = compareTimelines(b, a);
  assert.equal(back.newInB.count, 0);
  assert.equal(back.goneFromA.count, 50);
  assert.deepEqual(
    back.growth.map((g) => g.bytes),
    [-200 * MiB],
  );
  // A timeline compared with itself: nothing moved.
  const same = compareTimelines(a, a);
  assert.deepEqual([same.newInB.count, same.goneFromA.count, same.growth.length, same.peak.diff], [0, 0, 0, 0]);
});

test('a damaged trace still crosses the wire: a time that goes back, sizes and addresses that are none, a frame past the wire’s lengths', () => {
  // The reader fuzz's cases (test/integration/reader-fuzz.test.ts): each was modelled, then refused by the host as a
  // timeline it cannot draw (time going back, a NaN baseline, a negative address) or a label past 1,000 characters.
  const frame = new Map<PickleValue, PickleValue>([
    ['filename', `/src/${'deep/'.repeat(1000)}model.py`],
    ['line', -3.5],
    ['name', 'forward'],
  ]);
  const entry = (action: string, addr: PickleValue, size: PickleValue, time: number) =>
    new Map<PickleValue, PickleValue>([
      ['action', action],
      ['addr', addr],
      ['size', size],
      ['time_us', time],
      ['frames', [frame]],
    ]);
  const m = buildSnapshotModel(
    new Map<PickleValue, PickleValue>([
      [
        'segments',
        [
          new Map<PickleValue, PickleValue>([
            ['address', -1],
            ['total_size', 1.5],
            [
              'blocks',
              [
                new Map<PickleValue, PickleValue>([
                  ['size', null],
                  ['state', 'active_allocated'],
                ]),
              ],
            ],
          ]),
        ],
      ],
      [
        'device_traces',
        [[entry('alloc', 0x1000, 100, 1000), entry('alloc', -4096, 2 ** 60, 990), entry('alloc', 0x3000, -7, 1010), entry('free_completed', 0x1000, 100, 5)]],
      ],
    ]),
  );
  const trace = m.devices[0]!;
  assert.ok(Number.isFinite(trace.baseAllocated) && Number.isFinite(trace.baseReserved));
  assert.deepEqual([...trace.size], [100, 0, 0, 100], 'a size that is no whole number from 0 to 2^53 is none');
  assert.ok(Number.isNaN(trace.address[1]!), 'a negative address is unknown');
  const t = timelineFromSnapshot(m, 0);
  const back = decodeTimeline(structuredClone(encodeTimeline(t)));
  assert.deepEqual([...back.allocations.start], [0, 0, 10], 'the entry timed before the one before it is drawn at that one’s time');
  assert.deepEqual([...back.allocations.end], [10, Infinity, Infinity]);
  assert.ok(back.markers.every((marker) => marker.label.length <= 1000));
  assert.ok(back.stacks[0]!.frames.every((f) => f.file.length <= 4096 && f.line === 0));
});
