/**
 * About how much memory a JSON-like value holds (strings at two bytes a character, typed arrays at their length,
 * numbers at eight), for caches bounded by bytes. An estimate: shared objects are counted each time they are
 * reached, and nothing is counted past `stopAt` (the walk ends there).
 */
export function approxBytes(value: unknown, stopAt = Number.MAX_SAFE_INTEGER): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length && total <= stopAt) {
    const v = stack.pop();
    if (typeof v === 'string') total += 16 + v.length * 2;
    else if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) total += 8;
    else if (ArrayBuffer.isView(v)) total += 64 + v.byteLength;
    else if (Array.isArray(v)) {
      total += 16;
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object') {
      total += 32;
      for (const [key, item] of Object.entries(v)) {
        total += 8 + key.length * 2;
        stack.push(item);
      }
    }
  }
  return total;
}
