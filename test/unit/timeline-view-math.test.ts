import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AddressRaster, buildAddressLayout, hitAddress } from '../../core/memory/address-layout';
import type { SampleSeries } from '../../core/memory/samples';
import { announce, counterValueAt, describe, hexAddress, summarySentences } from '../../core/memory/timeline-describe';
import { summarizeTimeline } from '../../core/memory/timeline-model';
import { addSamples, MAX_MONITOR_SAMPLES } from '../../core/memory/sample-batches';
import { timelineAction } from '../../core/memory/timeline-keys';
import { buildActiveLayout, byPosition, stackNeighbour, type Palette } from '../../core/memory/timeline-layout';
import { buildSpanIndex, counterColumns, hitSpan, spanColumns } from '../../core/memory/timeline-lod';
import {
  COUNTER_HEIGHT,
  gutterWidth,
  layoutTracks,
  MAX_GUTTER_WIDTH,
  MIN_ALLOCATIONS_HEIGHT,
  MIN_COUNTER_HEIGHT,
  MIN_GUTTER_WIDTH,
  minTracksHeight,
  trackAt,
  tracksHeight,
} from '../../core/memory/timeline-tracks';
import {
  clampWindow,
  formatDuration,
  fullWindow,
  levelFor,
  MIN_SPAN_US,
  panWindow,
  selectWindow,
  TILE_COLS,
  tilesFor,
  tileUsPerCol,
  timeTicks,
  timeToX,
  xToTime,
  zoomWindow,
} from '../../core/memory/timeline-viewport';
import { emptySpans, timelineOf } from '../helpers/synthetic-timeline';

test('zoom keeps the time under the anchor in place; pan moves by a share of the view; both stay inside the timeline', () => {
  const d = 1000;
  const full = fullWindow(d);
  assert.deepEqual(full, { startUs: -10, endUs: 1010 });
  const w = { startUs: 100, endUs: 300 };
  const z = zoomWindow(w, 2, 0.25, d);
  assert.equal(z.endUs - z.startUs, 100);
  assert.equal(xToTime(z, 800, 200), xToTime(w, 800, 200), 'the time a quarter across stays a quarter across');
  assert.deepEqual(panWindow(w, 0.5, d), { startUs: 200, endUs: 400 });
  // out past the end: held at the edge, the span kept
  assert.deepEqual(panWindow({ startUs: 900, endUs: 1000 }, 1, d), { startUs: 910, endUs: 1010 });
  // zooming out past the whole timeline gives the whole timeline
  assert.deepEqual(zoomWindow(w, 0.001, 0.5, d), full);
  // no narrower than MIN_SPAN_US, however far in
  let deep = w;
  for (let i = 0; i < 100; i++) deep = zoomWindow(deep, 10, 0.5, d);
  assert.ok(Math.abs(deep.endUs - deep.startUs - MIN_SPAN_US) < 1e-9);
  assert.deepEqual(selectWindow(w, 0.75, 0.25, d), { startUs: 150, endUs: 250 });
  assert.deepEqual(clampWindow({ startUs: NaN, endUs: NaN }, d), full);
  assert.equal(timeToX(w, 800, 200), 400);
});

test('tiles: the level whose columns are no wider than a pixel; the tiles a window touches, the middle one first', () => {
  const d = 1_000_000;
  assert.equal(levelFor(d, d / TILE_COLS), 0);
  assert.equal(levelFor(d, d / TILE_COLS / 2), 1);
  assert.equal(levelFor(d, d / TILE_COLS / 3), 2, 'a level coarser than the pixels is never used');
  assert.ok(tileUsPerCol(d, levelFor(d, 7)) <= 7);
  assert.ok(tileUsPerCol(d, levelFor(d, 7)) > 3.5, 'nor one more than twice as fine');
  assert.equal(levelFor(d, 0), 0);
  const tiles = tilesFor({ startUs: 0, endUs: d }, d, 2);
  assert.deepEqual(tiles.map((t) => t.index).sort(), [0, 1, 2, 3]);
  const middle = tilesFor({ startUs: d * 0.3, endUs: d * 0.6 }, d, 3);
  assert.deepEqual(
    middle.map((t) => t.index),
    [3, 4, 2],
  );
});

test('the time axis: ticks at 1, 2 or 5 × a power of ten, labelled in the unit of the step', () => {
  assert.deepEqual(
    timeTicks({ startUs: 0, endUs: 1000 }, 500, 100).map((t) => t.label),
    ['0 µs', '200 µs', '400 µs', '600 µs', '800 µs', '1000 µs'],
  );
  assert.deepEqual(
    timeTicks({ startUs: 0, endUs: 5e6 }, 500, 100).map((t) => t.label),
    ['0 s', '1 s', '2 s', '3 s', '4 s', '5 s'],
  );
  assert.deepEqual(
    timeTicks({ startUs: 1500, endUs: 1502 }, 400, 100).map((t) => t.label),
    ['1.5000 ms', '1.5005 ms', '1.5010 ms', '1.5015 ms', '1.5020 ms'],
    'deep in a timeline, the unit of the times, with the decimals the step needs',
  );
  assert.deepEqual(
    timeTicks({ startUs: 0, endUs: 0.01 }, 500, 100).map((t) => t.label),
    ['0 ns', '2 ns', '4 ns', '6 ns', '8 ns', '10 ns'],
  );
  assert.equal(formatDuration(999.7), '1 ms');
  assert.equal(formatDuration(0.35), '350 ns');
  assert.equal(formatDuration(12_500), '12.5 ms');
  assert.equal(formatDuration(125e6), '2 min 5 s');
  assert.equal(formatDuration(Infinity), 'until the end');
});

test('counter columns: least, greatest and last value of the step function in each column, nothing before its first sample', () => {
  const counter = { time: Float64Array.from([10, 12, 13, 30]), value: Float64Array.from([5, 100, 7, 9]) };
  const c = counterColumns(counter, 0, 10, 5, 45);
  // column 1 = [10, 20): 5, then a spike to 100 for 1 µs, then 7 (which holds until 30)
  assert.deepEqual([...c.min], [NaN, 5, 7, 9, 9]);
  assert.deepEqual([...c.max], [NaN, 100, 7, 9, 9]);
  assert.deepEqual([...c.last], [NaN, 7, 7, 9, 9]);
  // past the timeline's end: nothing
  assert.ok(Number.isNaN(counterColumns(counter, 40, 10, 2, 45).max[1]!));
  assert.equal(counterValueAt(counter.time, counter.value, 12.5), 100);
  assert.ok(Number.isNaN(counterValueAt(counter.time, counter.value, 9)));
});

test('span columns: the share of each column a lane is busy, a span far narrower than a column still counted', () => {
  const spans = emptySpans(3);
  spans.start.set([0, 25, 26]);
  spans.end.set([15, 25.001, 40]);
  spans.lane.set([0, 0, 1]);
  spans.label.set([0, 1, 2]);
  const index = buildSpanIndex(spans);
  const cols = spanColumns(index, spans, 2, 0, 10, 5);
  assert.deepEqual(
    [...cols.busy.slice(0, 5)].map((v) => +v.toFixed(4)),
    [1, 0.5, 0.0001, 0, 0],
  );
  assert.deepEqual([...cols.count.slice(0, 5)], [1, 1, 1, 0, 0]);
  assert.deepEqual(
    [...cols.busy.slice(5)].map((v) => +v.toFixed(2)),
    [0, 0, 0.4, 1, 0],
  );
  assert.equal(hitSpan(index, spans, 0, 25.0005, 1), 1);
  assert.equal(hitSpan(index, spans, 0, 20, 1), -1);
  assert.equal(hitSpan(index, spans, 0, 15.5, 1), 0);
});

test('tracks: axis, markers, counters by group, the allocations area filling the rest, then only the lanes that have spans', () => {
  const t = timelineOf([[0, 10, 5]]);
  const counter = (id: string, group: 'device' | 'process' | 'allocated') => ({
    id,
    label: id,
    group,
    unit: 'bytes' as const,
    time: new Float64Array(0),
    value: new Float64Array(0),
  });
  t.counters = [
    counter('run', 'allocated'),
    counter('gpu', 'device'),
    { ...counter('pid 9', 'process'), flag: { kind: 'exited', text: 'exited, still holds memory', fix: '' } },
  ];
  t.spans = emptySpans(2);
  t.spans.lane.set([0, 2]);
  const tracks = layoutTracks(t, 600);
  assert.deepEqual(
    tracks.map((k) => `${k.kind}:${k.label}`),
    [
      'axis:Time',
      'markers:Markers',
      'counter:gpu',
      'counter:pid 9 — exited, still holds memory',
      'counter:run',
      'allocations:Allocations',
      'spans:Kernels',
      'spans:Memsets',
    ],
  );
  assert.equal(tracksHeight(tracks), 600);
  assert.equal(trackAt(tracks, 599)?.label, 'Memsets');
  const small = layoutTracks(t, 100);
  assert.equal(small.find((k) => k.kind === 'allocations')!.height, MIN_ALLOCATIONS_HEIGHT, 'too small a panel: the view scrolls');
});

test('tracks on a short panel: the counters give up height before the allocations do; a second view on the same axis draws none', () => {
  const t = timelineOf([[0, 10, 5]]);
  const counter = (id: string) => ({
    id,
    label: id,
    group: 'allocated' as const,
    unit: 'bytes' as const,
    time: new Float64Array(0),
    value: new Float64Array(0),
  });
  t.counters = [counter('allocated'), counter('reserved')];
  const height = (tracks: ReturnType<typeof layoutTracks>, kind: string) => tracks.filter((k) => k.kind === kind).map((k) => k.height);
  // 1024×700, the output panel maximised: about 390 px for the canvas
  const short = layoutTracks(t, 392);
  assert.deepEqual(height(short, 'allocations'), [MIN_ALLOCATIONS_HEIGHT]);
  assert.deepEqual(height(short, 'counter'), [26, 26]);
  assert.equal(tracksHeight(short), 392, 'it fits: no scrolling');
  assert.equal(minTracksHeight(t), 22 + 18 + 2 * MIN_COUNTER_HEIGHT + MIN_ALLOCATIONS_HEIGHT);
  const tall = layoutTracks(t, 900);
  assert.deepEqual(height(tall, 'counter'), [COUNTER_HEIGHT, COUNTER_HEIGHT]);
  assert.equal(height(tall, 'allocations')[0], 900 - 22 - 18 - 2 * COUNTER_HEIGHT);
  const second = layoutTracks(t, 300, { axis: false, minAllocations: 160 });
  assert.equal(second[0]!.kind, 'markers');
  assert.deepEqual(height(second, 'allocations'), [300 - 18 - 2 * 44]);
});

test('the label column: as wide as the longest name (within its bounds), never more than a third of the view', () => {
  const measure = (text: string) => text.length * 7;
  assert.equal(gutterWidth(['Time', 'Markers'], measure, 1000), MIN_GUTTER_WIDTH);
  assert.equal(gutterWidth(['cuda:0 reserved (PyTorch cache)'], measure, 1000), 31 * 7 + 16);
  assert.equal(gutterWidth(['pid 4242 python train.py --epochs 90 — exited, still holds memory'], measure, 1200), MAX_GUTTER_WIDTH);
  assert.equal(gutterWidth(['cuda:0 reserved (PyTorch cache)'], measure, 480), 160, 'a third of a narrow view');
});

test('keys: arrows pan, + and − zoom, 0 resets, brackets step through allocations, M through markers', () => {
  assert.deepEqual(timelineAction('ArrowRight', false), { kind: 'pan', share: 0.1 });
  assert.deepEqual(timelineAction('ArrowLeft', true), { kind: 'pan', share: -0.5 });
  assert.equal(timelineAction('+', false)?.kind, 'zoom');
  assert.equal(timelineAction('=', false)?.kind, 'zoom');
  assert.deepEqual(timelineAction('0', false), { kind: 'reset' });
  assert.deepEqual(timelineAction(']', false), { kind: 'step-allocation', by: 1 });
  assert.deepEqual(timelineAction('M', true), { kind: 'step-marker', by: -1 });
  assert.equal(timelineAction('x', false), null);
});

test('the stack neighbours of an allocation: above and below at a time in its life', () => {
  const layout = buildActiveLayout(
    timelineOf([
      [0, 10, 100],
      [2, 6, 50],
      [4, 12, 30],
    ]).allocations,
  );
  assert.equal(stackNeighbour(layout, 1, 5, 1), 2);
  assert.equal(stackNeighbour(layout, 1, 5, -1), 0);
  assert.equal(stackNeighbour(layout, 2, 7, -1), 0, 'after B is freed, A is under C');
  assert.equal(stackNeighbour(layout, 2, 7, 1), -1);
  assert.equal(stackNeighbour(layout, 1, 50, -1), 0, 'outside its life: at its start');
  assert.equal(stackNeighbour(layout, 1, 50, 1), -1, 'C was not made yet when B was');
});

test('describe: what, size, address, step, user frame and time alive, as the tooltip and details say them', () => {
  const t = timelineOf([[1000, 3500, 64 * 1024 ** 2]]);
  t.allocations.address[0] = 0x7f0000200000;
  t.allocations.step[0] = 2;
  t.allocations.stack[0] = 0;
  t.steps = [{ index: 2, label: 'alloc buf' }];
  t.stacks = [
    {
      frames: [
        { file: 'c10/cuda/CUDACachingAllocator.cpp', line: 0, name: 'malloc' },
        { file: '/home/u/train.py', line: 42, name: 'forward' },
      ],
      userFrame: 1,
    },
  ];
  const d = describe(t, { kind: 'allocation', index: 0 });
  assert.equal(d.title, '64 MiB allocation from train.py:42');
  assert.deepEqual(
    d.facts.map((f) => `${f.name}: ${f.value}`),
    [
      'Size: 64 MiB (67,108,864 bytes)',
      'Address: 0x7f0000200000',
      'Alive: 2.5 ms, from 1 ms to 3.5 ms',
      'Step: step 2: alloc buf',
      'Made at: /home/u/train.py:42 (forward)',
    ],
  );
  assert.equal(d.userFrame, 1);
  assert.match(announce(t, { kind: 'allocation', index: 0 }), /^64 MiB allocation from train\.py:42\. Size: 64 MiB/);
  assert.equal(hexAddress(NaN), 'unknown');
  t.allocations.end[0] = Infinity;
  assert.match(describe(t, { kind: 'allocation', index: 0 }).facts[2]!.value, /never freed/);
});

test('the address view: blocks at their address, large unused gaps squeezed, small ones kept as they are', () => {
  const MiB = 1024 ** 2;
  const t = timelineOf([
    [0, 10, 1 * MiB],
    [0, 5, 1 * MiB],
    [5, 10, 1 * MiB], // reuses the second block's address once it is freed
    [0, 10, 1 * MiB], // a terabyte away
  ]);
  const base = 0x7f0000000000;
  t.allocations.address.set([base, base + 2 * MiB, base + 2 * MiB, base + 2 ** 40]);
  const layout = buildActiveLayout(t.allocations);
  const address = buildAddressLayout(t.allocations, layout);
  assert.equal(address.lo.length, 2, 'the 1 MiB hole is kept, the terabyte squeezed');
  assert.equal(address.yOf(base + 2 * MiB), 2 * MiB);
  // 1 MiB, the 1 MiB hole, 1 MiB; then a squeezed gap (a tenth of what is shown), then the far 1 MiB
  assert.equal(address.yOf(base + 2 ** 40), 3 * MiB + address.gap);
  assert.ok(Math.abs(address.gap - 0.4 * MiB) < 1);
  assert.ok(Math.abs(address.height - 4.4 * MiB) < 1);
  assert.ok(Number.isNaN(address.yOf(base + 2 ** 39)));
  assert.equal(hitAddress(address, layout, 1, 2, 2.5 * MiB), 1);
  assert.equal(hitAddress(address, layout, 6, 7, 2.5 * MiB), 2);
  assert.equal(hitAddress(address, layout, 1, 2, 1.5 * MiB), -1, 'the hole');
  const palette: Palette = { r: Float32Array.from([1, 0]), g: Float32Array.from([0, 1]), b: Float32Array.from([0, 0]) };
  const rows = Math.ceil(address.height / MiB);
  const target = { cols: 10, rows, t0: 0, usPerCol: 1, bytesPerRow: MiB, pixels: new Uint8ClampedArray(10 * rows * 4) };
  const r = new AddressRaster(address, layout, byPosition(layout, Uint8Array.from([0, 1, 0, 1])), palette, target);
  while (!r.advance(1));
  const px = (c: number, row: number) => [...target.pixels.slice(((rows - 1 - row) * 10 + c) * 4, ((rows - 1 - row) * 10 + c) * 4 + 4)];
  assert.deepEqual(px(2, 0), [255, 0, 0, 255]);
  assert.equal(px(2, 1)[3], 0, 'the hole is empty');
  assert.deepEqual(px(2, 2), [0, 255, 0, 255]);
  assert.deepEqual(px(7, 2), [255, 0, 0, 255], 'the reused address, in the new block’s colour');
});

test('the summary in sentences: allocations, the peak, the OOMs, what was left alive, by the kind of timeline', () => {
  const t = timelineOf([
    [0, 10, 100],
    [2, Infinity, 50],
  ]);
  const summary = summarizeTimeline(t);
  assert.deepEqual(summarySentences(t, summary), [
    '2 allocations over 10 µs.',
    'Peak 150 B at 2 µs, with 2 allocations alive.',
    '1 allocation (50 B) still alive when the timeline ends: leak candidates.',
  ]);
  t.source = 'run';
  assert.match(summarySentences(t, summary).at(-1)!, /^1 allocation \(50 B\) never freed: leaked\.$/);
  t.allocations.end[1] = 5;
  assert.equal(summarySentences(t, summarizeTimeline(t)).at(-1), 'Everything allocated was freed.');
});

test('monitor batches: processes merged by pid, samples appended, the oldest dropped past the bound and counted', () => {
  const sample = (timeUs: number) => ({ timeUs, devices: [{ index: 0, usedBytes: 1, freeBytes: 2, totalBytes: 3 }], processes: [] });
  const proc = (pid: number, firstSeenUs: number, command: string) => ({ pid, command, flag: null, firstSeenUs, lastSeenUs: firstSeenUs });
  let series = { intervalMs: 100, devices: [], processes: [], samples: [], dropped: 0 } as SampleSeries;
  series = addSamples(series, [sample(1), sample(2)], [proc(7, 1, 'python train.py')]);
  series = addSamples(series, [sample(3)], [proc(7, 3, 'python train.py --resume'), proc(8, 3, 'other')]);
  assert.deepEqual(
    series.processes.map((p) => [p.pid, p.command, p.firstSeenUs]),
    [
      [7, 'python train.py --resume', 1],
      [8, 'other', 3],
    ],
  );
  assert.deepEqual(
    series.samples.map((s) => s.timeUs),
    [1, 2, 3],
  );
  const many = Array.from({ length: MAX_MONITOR_SAMPLES }, (_, i) => sample(10 + i));
  series = addSamples(series, many, []);
  assert.equal(series.samples.length, MAX_MONITOR_SAMPLES);
  assert.equal(series.dropped, 3);
  assert.equal(series.samples[0]!.timeUs, 10);
});
