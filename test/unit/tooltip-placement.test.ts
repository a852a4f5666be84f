import assert from 'node:assert/strict';
import { test } from 'node:test';

import { placeTooltip } from '../../core/geometry/tooltip-placement';

const viewport = { width: 1024, height: 700 };
const size = { width: 300, height: 60 };
const inside = (p: { left: number; top: number }) =>
  p.left >= 0 && p.top >= 0 && p.left + size.width <= viewport.width && p.top + size.height <= viewport.height;

test('a tooltip goes right and below its point, and flips where it would leave the viewport', () => {
  assert.deepEqual(placeTooltip({ x: 100, y: 100 }, size, viewport), { left: 112, top: 112 });
  // At the right edge (the occupancy chart's last point): to the left of the point.
  assert.deepEqual(placeTooltip({ x: 1010, y: 100 }, size, viewport), { left: 698, top: 112 });
  // At the bottom: above it.
  assert.deepEqual(placeTooltip({ x: 100, y: 690 }, size, viewport), { left: 112, top: 618 });
});

test('wherever the point is, all of the tooltip stays inside the viewport', () => {
  for (let x = 0; x <= viewport.width; x += 37)
    for (let y = 0; y <= viewport.height; y += 29) assert.ok(inside(placeTooltip({ x, y }, size, viewport)), `${x},${y}`);
  // Wider than the room on either side: clamped to the margin.
  assert.deepEqual(placeTooltip({ x: 200, y: 10 }, { width: 1000, height: 20 }, viewport), { left: 4, top: 22 });
});
