import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** Snapshots the host keeps for the Memory tab (diagnoses run from the UI, bundles opened), at most, per folder. */
export const KEPT_SNAPSHOTS = 20;

/**
 * Removes all but the newest `keep` files ending in `suffix` in a folder the host owns (its state folder's
 * diagnoses/ and bundles/): what the views opened recently stays, the state folder does not grow for ever.
 */
export async function keepNewest(dir: string, keep: number, suffix = '.pickle'): Promise<string[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith(suffix));
  const dated = await Promise.all(names.map(async (name) => ({ name, mtimeMs: (await stat(join(dir, name)).catch(() => null))?.mtimeMs ?? 0 })));
  const old = dated.sort((a, b) => b.mtimeMs - a.mtimeMs).slice(keep);
  await Promise.all(old.map((f) => rm(join(dir, f.name), { force: true })));
  return old.map((f) => f.name);
}
