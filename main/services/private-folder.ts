import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { processRuns } from '../process/process-state';

/** What a private folder is for: a diagnosis (the shim, its snapshot), a run under compute-sanitizer (its XML, CuPy's cache). */
export type PrivateFolderKind = 'diagnose' | 'sanitize' | 'profile';
const NAMED = /^gpu-workbench-(?:diagnose|sanitize|profile)-(\d+)-/;

/**
 * A private folder (mode 0700, as mkdtemp makes it) named with this process's pid, so that a later start removes the
 * folders of hosts that died (SIGKILL) before removing their own; those of hosts still running are left alone.
 */
export async function makePrivateFolder(kind: PrivateFolderKind, root = tmpdir()): Promise<string> {
  await sweepAbandoned(root).catch(() => undefined);
  return mkdtemp(join(root, `gpu-workbench-${kind}-${process.pid}-`));
}

/** Removes the private folders whose host is gone; answers their names. */
export async function sweepAbandoned(root = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(root)) {
    const m = NAMED.exec(name);
    if (!m || Number(m[1]) === process.pid || processRuns(Number(m[1]))) continue;
    await rm(join(root, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
