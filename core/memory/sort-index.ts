/**
 * The order of a column of float keys, as indices: what the timeline model sorts once (allocation starts, ends,
 * addresses) instead of sorting objects. A column already in order (the usual case: a trace is written in time
 * order) costs one pass. Otherwise an LSD radix sort over the keys' IEEE 754 bits, 16 bits a pass, which is
 * stable (equal keys keep their index order) and linear — a comparator sort of a million indices takes
 * several hundred milliseconds in V8, this a few tens.
 */

const isLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Indices 0..n-1 of `keys` ordered by key (NaN after +Infinity); stable. */
export function sortedIndex(keys: Float64Array): Uint32Array {
  const n = keys.length;
  const order = new Uint32Array(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    order[i] = i;
    if (sorted && i > 0 && !(keys[i - 1]! <= keys[i]!)) sorted = false;
  }
  if (sorted) return order;

  // Each key as two words that compare as unsigned integers in the order of the floats: negative numbers have
  // every bit flipped, the others only the sign bit.
  const words = new Uint32Array(keys.buffer, keys.byteOffset, n * 2);
  const hiAt = isLittleEndian ? 1 : 0;
  const hi = new Uint32Array(n);
  const lo = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const h = words[2 * i + hiAt]!;
    const l = words[2 * i + (1 - hiAt)]!;
    if (h & 0x80000000) {
      hi[i] = ~h >>> 0;
      lo[i] = ~l >>> 0;
    } else {
      hi[i] = (h | 0x80000000) >>> 0;
      lo[i] = l;
    }
  }

  let from = order;
  let to = new Uint32Array(n);
  const counts = new Uint32Array(65536);
  for (const [column, shift] of [
    [lo, 0],
    [lo, 16],
    [hi, 0],
    [hi, 16],
  ] as const) {
    counts.fill(0);
    for (let i = 0; i < n; i++) counts[(column[i]! >>> shift) & 0xffff]!++;
    // A pass where every key has the same digit changes nothing.
    if (counts[(column[0]! >>> shift) & 0xffff] === n) continue;
    let total = 0;
    for (let d = 0; d < 65536; d++) {
      const c = counts[d]!;
      counts[d] = total;
      total += c;
    }
    for (let i = 0; i < n; i++) {
      const index = from[i]!;
      to[counts[(column[index]! >>> shift) & 0xffff]!++] = index;
    }
    [from, to] = [to, from];
  }
  return from;
}
