const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** 80 GiB style, to 3 significant figures. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return String(bytes);
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const text = unit === 0 ? String(value) : trimZeros(value.toPrecision(3));
  return `${bytes < 0 ? '-' : ''}${text} ${UNITS[unit]}`;
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
