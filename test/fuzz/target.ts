import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { projectRoot } from '../../main/paths';
import type { Rng } from './mutate';

/** One reader under the fuzz: its real inputs, how a case's input is made from them, and how the reader reads it. */
export interface FuzzTarget {
  /** The file name the case's input is written to (readers take files, by path). */
  file: string;
  /** Loads the real inputs the cases mutate. */
  load(): Promise<void>;
  /** The case's input: one of the real inputs, mutated. */
  mutant(rng: Rng): Uint8Array;
  /**
   * Reads the file at `path` (`bytes`) as the reader process does, and what the host then does with its answer:
   * 'accepted', or 'refused: <kind>' for a refusal of the reader's own. Anything thrown is unexpected.
   */
  read(path: string, bytes: Uint8Array, rng: Rng): Promise<string>;
}

/** Thrown where the host (or the renderer) would refuse what the reader accepted: the two disagree. */
export class DisagreementError extends Error {
  override readonly name = 'DisagreementError';
}

/** The files under these folders of test/fixtures whose names end with `ext`, as bytes. */
export function fixtures(folders: string[], ext: string): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const folder of folders) {
    const dir = join(projectRoot(), 'test/fixtures', folder);
    for (const name of readdirSync(dir).sort()) if (name.endsWith(ext)) out.push(new Uint8Array(readFileSync(join(dir, name))));
  }
  if (!out.length) throw new Error(`no ${ext} fixtures in ${folders.join(', ')}`);
  return out;
}
