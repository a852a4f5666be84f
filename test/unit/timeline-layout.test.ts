import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  activeOutline,
  ActiveRaster,
  allocationAt,
  buildActiveLayout,
  byPosition,
  hitActive,
  liveBytesAt,
  MIN_ALPHA,
  outlinePolygon,
  RasterScratch,
  stackAt,
  type ActiveLayout,
  type Palette,
  type RasterTarget,
} from '../../core/memory/timeline-layout';
import { syntheticTimeline, timelineOf } from '../helpers/synthetic-timeline';

// Palette: 0 red, 1 green, 2 blue, 3 white.
const PALETTE: Palette = {
  r: Float32Array.from([1, 0, 0, 1]),
  g: Float32Array.from([0, 1, 0, 1]),
  b: Float32Array.from([0, 0, 1, 1]),
};

function raster(layout: ActiveLayout, colours: Uint8Array, t: Omit<RasterTarget, 'pixels'>): RasterTarget {
  const target = { ...t, pixels: new Uint8ClampedArray(t.cols * t.rows * 4) };
  const r = new ActiveRaster(layout, byPosition(layout, colours), PALETTE, target, new RasterScratch(layout.count));
  // in uneven steps, as frames with time left over draw them
  while (!r.advance(3));
  return target;
}

/** The pixel at column c, row r counted from the bottom. */
function pixel(t: RasterTarget, c: number, r: number): [number, number, number, number] {
  const o = ((t.rows - 1 - r) * t.cols + c) * 4;
  return [t.pixels[o]!, t.pixels[o + 1]!, t.pixels[o + 2]!, t.pixels[o + 3]!];
}

/** Within one step of 255 (colours are mixed in 32-bit floats, then rounded). */
function near(actual: number[], expected: number[]): void {
  assert.ok(
    actual.every((v, i) => Math.abs(v - expected[i]!) <= 1),
    `${actual.join(',')} is not ${expected.map((e) => e.toFixed(1)).join(',')}`,
  );
}

// A: 100 B over [0, 10); B: 50 B over [2, 6); C: 30 B over [4, 12).
const ABC = timelineOf([
  [0, 10, 100],
  [2, 6, 50],
  [4, 12, 30],
]);

test('each allocation sits on the ones alive below it, and drops when one below is freed', () => {
  const layout = buildActiveLayout(ABC.allocations);
  assert.deepEqual([...layout.base], [0, 100, 150]);
  assert.deepEqual(stackAt(layout, 5), [
    { allocation: 0, offset: 0, size: 100 },
    { allocation: 1, offset: 100, size: 50 },
    { allocation: 2, offset: 150, size: 30 },
  ]);
  // B freed at 6: C drops by 50. Alive is [start, end): at 6, B is gone.
  assert.deepEqual(stackAt(layout, 6), [
    { allocation: 0, offset: 0, size: 100 },
    { allocation: 2, offset: 100, size: 30 },
  ]);
  assert.deepEqual(stackAt(layout, 11), [{ allocation: 2, offset: 0, size: 30 }]);
  assert.deepEqual(stackAt(layout, 12), []);
  assert.equal(layout.peakBytes, 180);
  assert.equal(layout.peakUs, 4);
  assert.equal(liveBytesAt(layout, 7), 130);

  const outline = activeOutline(layout, 2);
  assert.deepEqual([...outline.time], [4, 6, 10]);
  assert.deepEqual([...outline.offset], [150, 100, 0]);
  assert.equal(outline.end, 12);
});

test('allocations out of start order are stacked by start, and named by their own index', () => {
  const t = timelineOf([
    [4, 12, 30],
    [0, 10, 100],
    [2, 6, 50],
  ]);
  const layout = buildActiveLayout(t.allocations);
  assert.deepEqual(
    stackAt(layout, 5).map((s) => [s.allocation, s.offset]),
    [
      [1, 0],
      [2, 100],
      [0, 150],
    ],
  );
  assert.equal(allocationAt(layout, 0), 1);
  assert.equal(hitActive(layout, 5, 6, 160), 0);
});

test('a free at the very moment of an allocation is taken first; a zero-length allocation holds no room', () => {
  const t = timelineOf([
    [0, 5, 10],
    [5, 9, 20], // made as the first is freed: at the bottom
    [6, 6, 40], // zero-length: alive at no instant
    [7, 8, 5],
  ]);
  const layout = buildActiveLayout(t.allocations);
  assert.deepEqual([...layout.base], [0, 0, 20, 20]);
  assert.equal(layout.peakBytes, 25);
  assert.deepEqual(stackAt(layout, 6), [{ allocation: 1, offset: 0, size: 20 }]);
});

test('the raster: whole rows in each allocation’s colour at its offset, at the column’s start instant', () => {
  const layout = buildActiveLayout(ABC.allocations);
  const t = raster(layout, Uint8Array.from([0, 1, 2]), { cols: 13, rows: 20, t0: 0, usPerCol: 1, bytesPerRow: 10 });
  // column 5 (t = 5): A rows 0–9, B rows 10–14, C rows 15–17, nothing above
  for (let r = 0; r < 10; r++) assert.deepEqual(pixel(t, 5, r), [255, 0, 0, 255]);
  for (let r = 10; r < 15; r++) assert.deepEqual(pixel(t, 5, r), [0, 255, 0, 255]);
  for (let r = 15; r < 18; r++) assert.deepEqual(pixel(t, 5, r), [0, 0, 255, 255]);
  assert.equal(pixel(t, 5, 18)[3], 0);
  // column 7: B gone, C dropped to rows 10–12
  for (let r = 10; r < 13; r++) assert.deepEqual(pixel(t, 7, r), [0, 0, 255, 255]);
  assert.equal(pixel(t, 7, 13)[3], 0);
  // column 11: only C, at the bottom
  assert.deepEqual(pixel(t, 11, 0), [0, 0, 255, 255]);
  assert.equal(pixel(t, 11, 3)[3], 0);
  // column 12: empty
  assert.equal(pixel(t, 12, 0)[3], 0);
});

test('the raster: a row holding several allocations is their byte-weighted mix, and shows however small its share', () => {
  const layout = buildActiveLayout(ABC.allocations);
  const t = raster(layout, Uint8Array.from([0, 1, 2]), { cols: 13, rows: 4, t0: 0, usPerCol: 1, bytesPerRow: 1000 });
  // column 5: 100 red + 50 green + 30 blue bytes in a row of 1000: coverage 0.18, below the least opacity
  near(pixel(t, 5, 0), [(100 / 180) * 255, (50 / 180) * 255, (30 / 180) * 255, MIN_ALPHA * 255]);
  // a row split between two allocations: A's 100 bytes then B's first 20 (bytesPerRow 120)
  const split = raster(layout, Uint8Array.from([0, 1, 2]), { cols: 13, rows: 4, t0: 0, usPerCol: 1, bytesPerRow: 120 });
  near(pixel(split, 5, 0), [(100 / 120) * 255, (20 / 120) * 255, 0, 255]);
  // second row: B's other 30, then C's 30, then 60 empty bytes: half covered
  near(pixel(split, 5, 1), [0, 127.5, 127.5, 127.5]);
});

test('the raster: an allocation that lives less than a column is drawn in its column, at the offset it was made at', () => {
  const t = timelineOf([
    [0, 10, 100],
    [2, 6, 50],
    [3.2, 3.5, 20], // D: lives 0.3 µs, made on top of A and B
    [8, 8, 10], // E: zero-length, made when A (100) is alive
  ]);
  const layout = buildActiveLayout(t.allocations);
  const target = raster(layout, Uint8Array.from([0, 1, 2, 3]), { cols: 11, rows: 20, t0: 0, usPerCol: 1, bytesPerRow: 10 });
  // column 3: A, B from the stack; D at 150–170
  assert.deepEqual(pixel(target, 3, 15), [0, 0, 255, 255]);
  assert.deepEqual(pixel(target, 3, 16), [0, 0, 255, 255]);
  assert.equal(pixel(target, 3, 17)[3], 0);
  assert.equal(pixel(target, 4, 15)[3], 0, 'D is gone by the next column');
  // column 8: E at 100–110 on top of A
  assert.deepEqual(pixel(target, 8, 10), [255, 255, 255, 255]);
  assert.equal(hitActive(layout, 3, 4, 155), 2);
  assert.equal(hitActive(layout, 3, 4, 145), 1);
  assert.equal(hitActive(layout, 8, 9, 105), 3);
  assert.equal(hitActive(layout, 8, 9, 115), -1);
  // with a column as wide as the timeline, every allocation is still there
  const one = raster(layout, Uint8Array.from([0, 1, 2, 3]), { cols: 1, rows: 20, t0: 0, usPerCol: 11, bytesPerRow: 10 });
  assert.deepEqual(pixel(one, 0, 0), [255, 0, 0, 255], 'A from the stack at t = 0');
  const above = pixel(one, 0, 10);
  assert.ok(above[3] > 0 && above[1] > 0, 'B and E share the rows above A');
  assert.ok(pixel(one, 0, 15)[2] > 0, 'D, though it lived 0.3 µs of 11');
});

test('100,000 allocations: offsets agree with a brute-force stack, every allocation reaches a pixel, and columns match the stacks', () => {
  const timeline = syntheticTimeline({ allocations: 100_000, workingSet: 2000, leakShare: 0.01, shortShare: 0.2, seed: 7 });
  const a = timeline.allocations;
  const layout = buildActiveLayout(a);

  // base = bytes alive just before it, from the definition, for a sample of allocations
  for (let i = 0; i < a.count; i += 997) {
    let expected = 0;
    for (let j = 0; j < i; j++) if (a.start[j]! <= a.start[i]! && a.end[j]! > a.start[i]! && a.end[j]! > a.start[j]!) expected += a.size[j]!;
    assert.equal(layout.base[i], expected, `base of ${i}`);
  }
  // the stack never has a hole and sums to what is alive
  for (const t of [0, timeline.durationUs / 3, timeline.durationUs / 2, timeline.durationUs - 1]) {
    const stack = stackAt(layout, t);
    let offset = 0;
    for (const s of stack) {
      assert.equal(s.offset, offset);
      offset += s.size;
    }
    let alive = 0;
    for (let j = 0; j < a.count; j++) if (a.start[j]! <= t && a.end[j]! > t && a.end[j]! > a.start[j]!) alive += a.size[j]!;
    assert.equal(offset, alive);
    assert.ok(offset <= layout.peakBytes);
  }

  // whole timeline in 300 columns, 200 rows: every allocation shows at its start column, at its offset then
  const cols = 300;
  const rows = 200;
  const usPerCol = timeline.durationUs / cols;
  const bytesPerRow = layout.peakBytes / (rows - 1);
  const colours = new Uint8Array(a.count).map((_, i) => i % 4);
  const target = raster(layout, colours, { cols, rows, t0: 0, usPerCol, bytesPerRow });
  let missing = 0;
  for (let i = 0; i < a.count; i++) {
    const c = Math.min(cols - 1, Math.floor(a.start[i]! / usPerCol));
    if (pixel(target, c, Math.floor(layout.base[i]! / bytesPerRow))[3] === 0) missing++;
  }
  assert.equal(missing, 0, 'allocations with no pixel');

  // a column's pixels are the stack at its start instant plus what was made within it: rows under the stack's top are covered
  for (const c of [0, 17, 150, 299]) {
    const top = liveBytesAt(layout, c * usPerCol);
    for (let r = 0; r < Math.floor(top / bytesPerRow); r++) assert.equal(pixel(target, c, r)[3], 255, `column ${c} row ${r}`);
  }
  // and a hit test at a pixel inside the stack finds the allocation the brute-force stack has there
  for (const c of [5, 120, 260]) {
    const ta = c * usPerCol;
    for (const s of stackAt(layout, ta).filter((_, k) => k % 50 === 0)) {
      assert.equal(hitActive(layout, ta, ta + usPerCol, s.offset + s.size / 2), s.allocation);
    }
  }
});

test('a raster resumed in any steps draws the same tile', () => {
  const timeline = syntheticTimeline({ allocations: 5000, seed: 3 });
  const layout = buildActiveLayout(timeline.allocations);
  const colours = new Uint8Array(layout.count).map((_, i) => i % 4);
  const spec = { cols: 64, rows: 50, t0: timeline.durationUs / 4, usPerCol: timeline.durationUs / 200, bytesPerRow: layout.peakBytes / 40 };
  const scratch = new RasterScratch(layout.count);
  const whole = { ...spec, pixels: new Uint8ClampedArray(64 * 50 * 4) };
  new ActiveRaster(layout, colours, PALETTE, whole, scratch).advance(64);
  // a raster abandoned half-way (the view moved) leaves the scratch fit for the next
  const abandoned = new ActiveRaster(layout, colours, PALETTE, { ...spec, t0: 0, pixels: new Uint8ClampedArray(64 * 50 * 4) }, scratch);
  abandoned.advance(5);
  const pieces = { ...spec, pixels: new Uint8ClampedArray(64 * 50 * 4) };
  const r = new ActiveRaster(layout, colours, PALETTE, pieces, scratch);
  while (!r.advance(1));
  assert.deepEqual(pieces.pixels, whole.pixels);
  assert.throws(() => abandoned.advance(1), /newer raster/);
});

test('the outline of an allocation freed under a million times stays a few points per pixel column, the same shape', () => {
  // C (30 B) made at 4 over A and B; B freed at 6, A at 10; C freed at 12
  const layout = buildActiveLayout(ABC.allocations);
  const o = activeOutline(layout, 2);
  const poly = outlinePolygon(o, 30, 0, 12, 120, 1);
  // bottom: 150 from x=40, 100 from x=60, 0 from x=100 to the end at x=120; then back along the top, 30 higher
  assert.deepEqual(
    [...poly.x].map((x, k) => [x, poly.y[k]]),
    [
      [40, 150],
      [60, 150],
      [60, 100],
      [100, 100],
      [100, 0],
      [120, 0],
      [120, 30],
      [100, 30],
      [100, 130],
      [60, 130],
      [60, 180],
      [40, 180],
    ],
  );
  // 200,000 frees under one allocation, drawn 800 pixels wide: at most 2 points per column per edge
  const n = 200_000;
  const time = new Float64Array(n + 1).map((_, k) => k);
  const offset = new Float64Array(n + 1).map((_, k) => (n - k) * 8);
  const dense = outlinePolygon({ time, offset, end: n + 1 }, 64, 0, n + 1, 800, 1);
  assert.ok(dense.x.length <= 4 * 800 + 8, `${dense.x.length} points`);
  assert.equal(dense.y[0], n * 8);
  assert.equal(Math.min(...dense.y), 0);
  // a window on part of its life: only the steps in it (and one either side)
  const part = outlinePolygon({ time, offset, end: n + 1 }, 64, 1000, 1010, 800, 1);
  assert.ok(part.x.length < 60, `${part.x.length} points`);
});
