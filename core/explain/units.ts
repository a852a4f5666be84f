const FACTORS: Record<string, number> = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12, KIB: 1024, MIB: 1024 ** 2, GIB: 1024 ** 3, TIB: 1024 ** 4 };

/** "2.00 GiB", "211.13 MiB", "1,024 bytes" -> bytes. */
export function parseSize(text: string): number | null {
  const m = /([\d,]+(?:\.\d+)?)\s*(bytes|B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\b/i.exec(text);
  if (!m) return null;
  const unit = m[2]!.toUpperCase() === 'BYTES' ? 'B' : m[2]!.toUpperCase();
  const factor = FACTORS[unit];
  return factor === undefined ? null : Math.round(Number(m[1]!.replace(/,/g, '')) * factor);
}
