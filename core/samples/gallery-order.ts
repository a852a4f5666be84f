// Made at the first sort, not at load: ICU's collator costs milliseconds, and every CLI command's start loads this file.
let titleOrder: Intl.Collator | null = null;
const sortKey = (title: string) => title.replace(/^[^\p{L}\p{N}]+/u, '');

/**
 * The failure gallery in the order a person scans it: by the title each sample shows, not by its folder's name
 * (`block-too-large` is "64 × 32 threads per block"). As a person reads them: case aside, numbers by their value
 * ("64 × 32" before "100000 floats"), leading punctuation aside (`__trap()` under T).
 */
export function byTitle<T extends { name: string; manifest: { title: string } }>(samples: readonly T[]): T[] {
  const order = (titleOrder ??= new Intl.Collator('en', { numeric: true, sensitivity: 'base' }));
  return [...samples].sort((a, b) => order.compare(sortKey(a.manifest.title), sortKey(b.manifest.title)) || a.name.localeCompare(b.name));
}
