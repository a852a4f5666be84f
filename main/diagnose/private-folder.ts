import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { processRuns } from '../process/process-state';

const PREFIX = 'gpu-workbench-diagnose-';

/**
 * A private folder for one diagnosis (the shim, its snapshot, CuPy's cache), mode 0700 as mkdtemp makes it,
 * named with this process's pid so that a later start removes the folders of hosts that died (SIGKILL) before
 * removing their own.
 */
export async function makePrivateFolder(): Promise<string> {
  await sweepAbandoned().catch(() => undefined);
  return mkdtemp(join(tmpdir(), `${PREFIX}${process.pid}-`));
}

export async function sweepAbandoned(root = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(root)) {
    const m = new RegExp(`^${PREFIX}(\\d+)-`).exec(name);
    if (!m || Number(m[1]) === process.pid || processRuns(Number(m[1]))) continue;
    await rm(join(root, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
