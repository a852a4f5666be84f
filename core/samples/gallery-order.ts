/**
 * The failure gallery in the order a person scans it: by the title each sample shows, not by its folder's name
 * (`block-too-large` is "64 × 32 threads per block"). As a person reads them: case aside, numbers by their value
 * ("64 × 32" before "100000 floats"), leading punctuation aside (`__trap()` under T).
 */
const TITLE_ORDER = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });
const sortKey = (title: string) => title.replace(/^[^\p{L}\p{N}]+/u, '');

export function byTitle<T extends { name: string; manifest: { title: string } }>(samples: readonly T[]): T[] {
  return [...samples].sort((a, b) => TITLE_ORDER.compare(sortKey(a.manifest.title), sortKey(b.manifest.title)) || a.name.localeCompare(b.name));
}
