import { fail, ok, type Result } from './result';

export type Dim3 = readonly [x: number, y: number, z: number];

/**
 * Parses "X", "X,Y" or "X,Y,Z" (also "XxYxZ") into a Dim3. Each component must be a positive
 * integer below 2^32 — what the driver's unsigned int can hold; the device's own limits are the
 * validator's business, not the parser's.
 */
export function parseDim3(text: string, what: string): Result<Dim3> {
  const trimmed = text.trim();
  if (trimmed === '') return fail(`${what} is empty: give X, X,Y or X,Y,Z (for example 256 or 16,16)`);
  const parts = trimmed.split(/\s*[,x×]\s*/i);
  if (parts.length > 3) return fail(`${what} "${text}" has ${parts.length} components: at most 3 (X,Y,Z)`);
  const values: number[] = [];
  for (const part of parts) {
    if (!/^\d+$/.test(part)) {
      return fail(`${what} "${text}": "${part}" is not a positive whole number`);
    }
    const value = Number(part);
    if (value < 1) return fail(`${what} "${text}": every dimension must be at least 1`);
    if (value > 0xffffffff) return fail(`${what} "${text}": ${part} does not fit the 32-bit launch field`);
    values.push(value);
  }
  while (values.length < 3) values.push(1);
  return ok([values[0]!, values[1]!, values[2]!]);
}

export const dimProduct = (d: Dim3): number => d[0] * d[1] * d[2];
/** As in a launch: 256, (16,16), (8,8,4). */
export const formatDim3 = (d: Dim3): string => (d[1] === 1 && d[2] === 1 ? `${d[0]}` : d[2] === 1 ? `(${d[0]},${d[1]})` : `(${d.join(',')})`);
