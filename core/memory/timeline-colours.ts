/**
 * Which colour each allocation is drawn in: one hue per place in the user's code that made it (its stack's
 * top user frame), else per buffer name, else per size class, so that the allocations one line makes read
 * as one colour at every zoom; and two shades of it, alternating from one allocation to the next, so that
 * neighbours made by the same line still show as separate blocks. The theme supplies HUES colours; index
 * 2h is hue h, 2h + 1 its second shade.
 */
import type { Timeline } from './timeline';

export const HUES = 12;
export const PALETTE_SIZE = HUES * 2;

/** FNV-1a: the same text gives the same colour in every session. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** What an allocation's colour stands for: "model.py:42", a buffer's name, or its size class. */
export function colourKey(t: Timeline, allocation: number): string {
  const a = t.allocations;
  const stack = t.stacks[a.stack[allocation]!];
  const frame = stack && stack.userFrame >= 0 ? stack.frames[stack.userFrame] : undefined;
  if (frame) return `${frame.file}:${frame.line}`;
  const label = t.labels[a.label[allocation]!];
  if (label !== undefined) return `label ${label}`;
  return `size ${Math.floor(Math.log2(Math.max(1, a.size[allocation]!)))}`;
}

export function allocationColours(t: Timeline): Uint8Array {
  const a = t.allocations;
  const out = new Uint8Array(a.count);
  const byStack = new Map<number, number>();
  const byLabel = new Map<number, number>();
  for (let i = 0; i < a.count; i++) {
    const s = a.stack[i]!;
    const stack = t.stacks[s];
    if (stack && stack.userFrame >= 0) {
      let c = byStack.get(s);
      if (c === undefined) byStack.set(s, (c = hash(colourKey(t, i)) % HUES));
      out[i] = c * 2 + (i & 1);
      continue;
    }
    const l = a.label[i]!;
    if (t.labels[l] !== undefined) {
      let c = byLabel.get(l);
      if (c === undefined) byLabel.set(l, (c = hash(colourKey(t, i)) % HUES));
      out[i] = c * 2 + (i & 1);
      continue;
    }
    out[i] = (Math.floor(Math.log2(Math.max(1, a.size[i]!))) % HUES) * 2 + (i & 1);
  }
  return out;
}
