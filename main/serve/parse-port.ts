/** A TCP port as typed (0 picks a free one); null when it is not a whole number from 0 to 65535. */
export function parsePort(value: string): number | null {
  const n = Number(value);
  return /^\d+$/.test(value.trim()) && Number.isInteger(n) && n >= 0 && n <= 65535 ? n : null;
}
