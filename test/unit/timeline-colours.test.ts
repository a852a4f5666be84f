import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { buildSnapshotModel } from '../../core/memory/snapshot-model';
import { timelineFromSnapshot } from '../../core/memory/snapshot-timeline';
import { ALLOCATION_PALETTE, allocationColours, PALETTE_SIZE } from '../../core/memory/timeline-colours';
import { unpickle } from '../../core/memory/unpickle';
import { TIMELINE_COLOURS } from '../../renderer/layout/chart-colours';
import { ROOT } from '../helpers/cli';
import { timelineOf } from '../helpers/synthetic-timeline';

const rgb = (hex: string) => [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16) / 255) as [number, number, number];
const linear = (v: number) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
/** WCAG's relative luminance and contrast ratio. */
const luminance = (hex: string) => {
  const [r, g, b] = rgb(hex).map(linear) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const contrast = (a: string, b: string) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
};
/** HSL saturation: 0 is a grey. */
const saturation = (hex: string) => {
  const c = rgb(hex);
  const max = Math.max(...c);
  const min = Math.min(...c);
  const l = (max + min) / 2;
  return max === min ? 0 : (max - min) / (1 - Math.abs(2 * l - 1));
};
/** CIE L*a*b* (D65) and the distance between two colours in it (ΔE 1976). */
const lab = (hex: string) => {
  const [r, g, b] = rgb(hex).map(linear) as [number, number, number];
  const xyz = [(0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b, (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883];
  const f = (t: number) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116);
  const [fx, fy, fz] = xyz.map(f) as [number, number, number];
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
};
const deltaE = (a: string, b: string) => Math.hypot(...lab(a).map((v, i) => v - lab(b)[i]!));

for (const theme of ['light', 'dark'] as const) {
  test(`the ${theme} palette: ${PALETTE_SIZE} colours, none a grey, each at least 3:1 against the background, neighbours far apart`, () => {
    const palette = ALLOCATION_PALETTE[theme];
    assert.equal(palette.length, PALETTE_SIZE);
    assert.equal(TIMELINE_COLOURS[theme].palette, palette, 'the canvas draws with this palette');
    const background = TIMELINE_COLOURS[theme].background;
    for (const colour of palette) {
      assert.ok(contrast(colour, background) >= 3, `${colour} on ${background}: ${contrast(colour, background).toFixed(2)}:1`);
      assert.ok(saturation(colour) >= 0.35, `${colour} is nearly grey (saturation ${saturation(colour).toFixed(2)})`);
    }
    // consecutive allocations of one stack take consecutive entries: those must not look alike
    for (let k = 0; k < PALETTE_SIZE; k++) {
      const a = palette[k]!;
      const b = palette[(k + 1) % PALETTE_SIZE]!;
      assert.ok(deltaE(a, b) >= 25, `${a} and ${b} are too alike (ΔE ${deltaE(a, b).toFixed(1)})`);
    }
    assert.equal(new Set(palette).size, PALETTE_SIZE);
  });
}

test('colours: each allocation of one stack its own, stepping from the stack’s place; the same in every session and order', () => {
  const t = timelineOf([
    [3, 9, 64],
    [0, 9, 64],
    [1, 9, 64],
    [2, 9, 64],
    [0, 9, 4],
    [1, 9, 4],
  ]);
  const frames = [{ file: 'a.py', line: 3, name: 'f' }];
  // two stack entries with the same frames are one call path
  t.stacks = [
    { frames, userFrame: 0 },
    { frames: [...frames], userFrame: 0 },
  ];
  t.labels = ['out'];
  t.allocations.stack.set([0, 1, 0, 1, -1, -1]);
  t.allocations.label.set([-1, -1, -1, -1, 0, 0]);
  const c = allocationColours(t);
  assert.ok(c.every((x) => x < PALETTE_SIZE));
  // by when each was made: 1 (t=0), 2 (t=1), 3 (t=2), 0 (t=3) step one place each
  const step = (x: number, y: number) => (c[y]! - c[x]! + PALETTE_SIZE) % PALETTE_SIZE;
  assert.deepEqual([step(1, 2), step(2, 3), step(3, 0)], [1, 1, 1]);
  assert.equal(step(4, 5), 1, 'a buffer’s allocations step too');
  assert.deepEqual(allocationColours(t), c, 'the same every time');
  // the same allocations in another order of columns: the same colour for the same allocation
  const swapped = timelineOf([
    [2, 9, 64],
    [1, 9, 64],
    [0, 9, 64],
    [3, 9, 64],
  ]);
  swapped.stacks = t.stacks;
  swapped.allocations.stack.set([0, 0, 0, 0]);
  const d = allocationColours(swapped);
  assert.deepEqual([d[2], d[1], d[0], d[3]], [c[1], c[2], c[3], c[0]]);
});

test('oom.pickle recorded on an H100: its eight 64 MiB blocks from one line are eight colours, not one', () => {
  const bytes = new Uint8Array(readFileSync(join(ROOT, 'test/fixtures/snapshots/h100/oom.pickle')));
  const t = timelineFromSnapshot(buildSnapshotModel(unpickle(bytes)), 0);
  assert.equal(t.allocations.count, 8);
  assert.equal(new Set(allocationColours(t)).size, 8);
});
