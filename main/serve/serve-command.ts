import { stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';

import { bundleSnapshotDir } from '../bundle/diagnosis-bundle';
import { EXIT } from '../cli/exit-codes';
import { diagnosisSnapshotDir } from '../diagnose/diagnose-files';
import { createHandlers } from '../host-api';
import { projectRoot, rendererDir } from '../paths';
import { forkLauncher } from '../process/launcher';
import { workspacePaths, type PathPolicy } from '../services/workspace-paths';
import { createWorkbench } from '../workbench';
import { startServeHost } from './serve-host';
import type { ServeCommandOptions } from './serve-options';

export { parsePort } from './parse-port';
export type { ServeCommandOptions } from './serve-options';

/**
 * serve's workspace: its roots, the workbench's own files (never written), and what the app fills itself and the
 * UI opens (the samples, the snapshots it keeps).
 */
export function serveWorkspace(roots: readonly string[], cwd = process.cwd()): Promise<PathPolicy> {
  const own = projectRoot();
  return workspacePaths({
    cwd,
    roots,
    protectedDirs: [own, join(own, 'node_modules')],
    appDirs: [join(own, 'samples'), diagnosisSnapshotDir(), bundleSnapshotDir()],
  });
}

/** What a token holder can do, in the words serve prints at start. */
export async function describeAccess(paths: PathPolicy, allowPrograms: boolean): Promise<string[]> {
  const roots = paths.roots ?? [];
  const lines = [
    `Files: the browser reads and writes only under ${[`${roots[0]} (where serve was started)`, ...roots.slice(1)].join(', ')}; add a folder with --root <folder>. It never writes programs or libraries, and never opens hidden files (names starting with a dot).`,
  ];
  const own = projectRoot();
  for (const root of roots) {
    if (!(await paths.reaches(root))) lines.push(`  Note: ${root} is inside a hidden folder: nothing under it can be opened from the browser.`);
    else if (!relative(own, root).startsWith('..')) lines.push(`  Note: ${root} holds the workbench’s own files: the browser can open them, not change them.`);
  }
  lines.push(
    allowPrograms
      ? 'Programs: on (--allow-programs): the browser may run any program it names, as you, and that program is not held to the folders above.'
      : 'Programs: off: the browser runs only its kernels and the workbench’s own tools (nvcc, compute-sanitizer); start with --allow-programs to let it run a program it names.',
  );
  return lines;
}

/** The first --root that is not a folder, in words; null when all are. */
async function badRoot(roots: readonly string[]): Promise<string | null> {
  for (const root of roots) {
    const info = await stat(resolve(root)).catch(() => null);
    if (!info?.isDirectory()) return `✗ --root ${root}: ${info ? 'is not a folder' : 'does not exist'}. Give a folder the browser may read and write under.`;
  }
  return null;
}

/**
 * Serves the UI and the API on 127.0.0.1 until SIGINT or SIGTERM; resolves with the exit code. The one
 * path behind both `gpu-workbench serve` and `npm run serve`.
 */
export async function serveUntilStopped(options: ServeCommandOptions): Promise<number> {
  const roots = options.root ?? [];
  const refused = await badRoot(roots);
  if (refused) {
    console.error(refused);
    return EXIT.usage;
  }
  const paths = await serveWorkspace(roots);
  const allowPrograms = options.allowPrograms ?? false;
  const workbench = createWorkbench(forkLauncher, { warmSpare: options.spare });
  let host;
  try {
    host = await startServeHost({
      port: options.port,
      rendererDir: rendererDir(),
      handlers: createHandlers(workbench, 'serve', { runsPrograms: allowPrograms, paths }),
    });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    console.error(
      e.code === 'EADDRINUSE'
        ? `✗ Port ${options.port} is in use: pass --port 0 for a free one, or another port.`
        : `✗ Could not start the server: ${e.message}`,
    );
    await workbench.dispose();
    return 1;
  }
  // What the token opens comes first: by the time anyone reads the URL, it has been said.
  for (const line of await describeAccess(paths, allowPrograms)) console.log(line);
  console.log(`GPU Workbench is serving at ${host.url}`);
  console.log('Open that URL in a browser on this machine, or forward the port over SSH (ssh -L).');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await Promise.all([host.close(), workbench.dispose()]);
  return 0;
}
