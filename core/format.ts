const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/**
 * 1234567 -> "1,234,567", 0.5 -> "0.5", -1234.5678 -> "-1,234.568": as en-US writes a number (at most three decimals),
 * the same on every machine whatever its locale. Written out rather than asked of ICU: the first `toLocaleString`
 * of a process builds a NumberFormat, which cost a new CLI 26 ms of its 170 on an H200 host.
 */
export function thousands(n: number): string {
  if (!Number.isFinite(n) || Math.abs(n) >= 1e21) return n.toLocaleString('en-US');
  const [whole, fraction] = threeDecimals(Math.abs(n));
  const decimals = fraction.replace(/0+$/, '');
  const sign = n < 0 || Object.is(n, -0) ? '-' : '';
  return `${sign}${whole.replace(/\B(?=(\d{3})+$)/g, ',')}${decimals ? `.${decimals}` : ''}`;
}

/** A non-negative number below 1e21 rounded half up to three decimals, on its shortest decimal form as ICU rounds. */
function threeDecimals(abs: number): [string, string] {
  const text = String(abs);
  if (text.includes('e')) return ['0', '']; // below 1e-6
  const [whole, fraction = ''] = text.split('.') as [string, string?];
  if (fraction.length <= 3) return [whole, fraction];
  const digits = (BigInt(whole + fraction.slice(0, 3)) + (fraction[3]! >= '5' ? 1n : 0n)).toString().padStart(4, '0');
  return [digits.slice(0, -3), digits.slice(-3)];
}

/** "1 finding", "2,048 findings"; `many` for a plural that is not the word and an s. */
export const plural = (n: number, one: string, many = `${one}s`): string => `${thousands(n)} ${n === 1 ? one : many}`;

/** "496,831 of 1,048,576 elements", "1 of 1 element": a part of a whole, the noun agreeing with the whole. */
export const partOf = (part: number, whole: number, one: string, many = `${one}s`): string => `${thousands(part)} of ${plural(whole, one, many)}`;

/**
 * A size in binary units, to two decimals with the trailing zeros dropped: "79.65 GiB", "211.13 MiB", "80 GiB",
 * "4,000 B". Two decimals at every size, as PyTorch and CuPy print theirs ("79.15 GiB total capacity", "211.13 MiB"),
 * so a figure here agrees with the one a framework or nvidia-smi (81559MiB = 79.65 GiB) shows beside it; never
 * rounded to three figures ("77.9 GiB" for 77.86). The one formatter for sizes: every view and report uses it.
 */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return String(bytes);
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  // 1023.999 MiB rounds to the next unit rather than to "1,024 MiB".
  if (unit > 0 && unit < UNITS.length - 1 && Number(value.toFixed(2)) >= 1024) {
    value /= 1024;
    unit++;
  }
  const [whole, fraction] = (unit === 0 ? value.toFixed(0) : value.toFixed(2)).split('.');
  const decimals = fraction?.replace(/0+$/, '') ?? '';
  return `${bytes < 0 ? '-' : ''}${thousands(Number(whole))}${decimals ? `.${decimals}` : ''} ${UNITS[unit]}`;
}

/** "1.50" -> "1.5", "2.00" -> "2", but "140" stays "140". */
const trimZeros = (text: string): string => (text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text);

/** CUDA encodes versions as 1000*major + 10*minor (13000 -> "13.0"). */
export function formatCudaVersion(version: number): string {
  return `${Math.floor(version / 1000)}.${Math.floor((version % 1000) / 10)}`;
}

export function formatMs(ms: number): string {
  if (ms < 0.01) return `${(ms * 1000).toFixed(2)} µs`;
  if (ms < 1) return `${(ms * 1000).toFixed(1)} µs`;
  return `${ms.toFixed(3)} ms`;
}

/**
 * A value read back from the device, as a person reads it: integers as they are up to 15 digits, larger
 * and tiny magnitudes in exponent form with 3 significant figures (5.12e+32), others to 6 significant
 * figures. NaN travels through JSON as null.
 */
export function formatNumber(n: number | null): string {
  if (n === null || Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Inf' : '-Inf';
  if (n === 0) return '0';
  const magnitude = Math.abs(n);
  if (magnitude >= 1e15 || magnitude < 1e-4) return n.toExponential(2).replace(/\.?0+e/, 'e');
  if (Number.isInteger(n)) return String(n);
  return trimZeros(n.toPrecision(6));
}

/** How many full waves of blocks a grid makes: "< 0.01 waves" rather than a misleading "0.00 waves". */
export function formatWaves(waves: number): string {
  if (waves === 0) return '0 waves';
  if (waves < 0.01) return '< 0.01 waves';
  const text = trimZeros(waves.toFixed(2));
  return `${text} ${text === '1' ? 'wave' : 'waves'}`;
}
