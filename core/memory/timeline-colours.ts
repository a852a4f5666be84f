/**
 * Which colour each allocation is drawn in. As PyTorch's memory_viz does, every allocation gets a colour of its
 * own, so that blocks stacked on one another read as separate blocks; unlike it, the colour is not the order of
 * drawing but stable: the k-th allocation made by one stack (the same call path) starts from that stack's own
 * place in the palette and steps k places on. The same allocation has the same colour at every zoom, in every
 * session, and in both files of a comparison; neighbours made by one loop differ. Allocations with no stack step
 * from their buffer's name, else from their size class.
 *
 * The palette (one per theme) is categorical, ordered so that neighbouring entries are far apart in hue, with no
 * greys (a grey block reads as "nothing there"), and every colour at least 3:1 against its theme's background
 * (WCAG's contrast for graphics). test/unit/timeline-colours.test.ts holds it to that.
 */
import type { Theme } from '../ui/theme';
import type { Timeline } from './timeline';

export const PALETTE_SIZE = 16;

export const ALLOCATION_PALETTE: Record<Theme, readonly string[]> = {
  dark: [
    '#4e9fe6',
    '#f28e2b',
    '#4fc1b0',
    '#e8625f',
    '#8cd17d',
    '#b88cd9',
    '#edc948',
    '#ff8fb1',
    '#5fb8e8',
    '#d9a05b',
    '#7fd6d0',
    '#f07a9a',
    '#a4c861',
    '#9b9ff2',
    '#e3b23c',
    '#d68fd6',
  ],
  light: [
    '#1f66b0',
    '#b85a00',
    '#00796b',
    '#c0392b',
    '#3b7d23',
    '#7b4fb0',
    '#8a6d00',
    '#c2185b',
    '#0b6f9e',
    '#8d5a1e',
    '#00767a',
    '#ad2f5b',
    '#5b7a12',
    '#5157c4',
    '#946200',
    '#9c3f9c',
  ],
};

/** FNV-1a: the same text gives the same colour in every session. */
export function hashText(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** What an allocation's colours step from: its whole stack ("model.py:42 f ← …"), else its buffer's name, else its size class. */
export function colourKey(t: Timeline, allocation: number): string {
  const a = t.allocations;
  const stack = t.stacks[a.stack[allocation]!];
  if (stack && stack.frames.length > 0) return `stack ${stack.frames.map((f) => `${f.file}:${f.line} ${f.name}`).join('\n')}`;
  const label = t.labels[a.label[allocation]!];
  if (label !== undefined) return `label ${label}`;
  return `size ${Math.floor(Math.log2(Math.max(1, a.size[allocation]!)))}`;
}

/**
 * The palette index of each allocation (0..PALETTE_SIZE-1). Allocations are counted per key in the order they
 * were made (by start time, then index), so the count does not depend on how the timeline's columns are ordered.
 */
export function allocationColours(t: Timeline): Uint8Array {
  const a = t.allocations;
  const out = new Uint8Array(a.count);
  const order = Array.from({ length: a.count }, (_, i) => i).sort((x, y) => a.start[x]! - a.start[y]! || x - y);
  // keys are worked out once per stack, per label, per size class: a million allocations from a few call sites cost a few hashes
  const byStack = new Map<number, { base: number; made: number }>();
  const byText = new Map<string, { base: number; made: number }>();
  for (const i of order) {
    const s = a.stack[i]!;
    let entry = s >= 0 && t.stacks[s]?.frames.length ? byStack.get(s) : undefined;
    if (!entry) {
      const key = colourKey(t, i);
      entry = byText.get(key);
      if (!entry) byText.set(key, (entry = { base: hashText(key) % PALETTE_SIZE, made: 0 }));
      if (s >= 0 && t.stacks[s]?.frames.length) byStack.set(s, entry);
    }
    out[i] = (entry.base + entry.made++) % PALETTE_SIZE;
  }
  return out;
}
