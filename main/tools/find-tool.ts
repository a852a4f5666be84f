import { execFile } from 'node:child_process';
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

import type { ToolReport } from '../../core/discovery';

const run = promisify(execFile);

/**
 * Where a CUDA toolkit program is looked for, in order: an explicit setting, CUDA_PATH and CUDA_HOME,
 * PATH, then /usr/local/cuda and every /usr/local/cuda-X.Y.
 */
export function toolCandidates(program: string, setting: string, env: Record<string, string | undefined> = process.env): string[] {
  const out: string[] = [];
  if (env[setting]) out.push(env[setting]!);
  for (const key of ['CUDA_PATH', 'CUDA_HOME']) if (env[key]) out.push(join(env[key]!, 'bin', program));
  for (const dir of (env['PATH'] ?? '').split(delimiter).filter(Boolean)) out.push(join(dir, program));
  out.push(join('/usr/local/cuda/bin', program));
  let versioned: string[] = [];
  try {
    versioned = readdirSync('/usr/local')
      .filter((d) => /^cuda-\d+\.\d+$/.test(d))
      .sort()
      .reverse();
  } catch {
    // no /usr/local
  }
  for (const d of versioned) out.push(join('/usr/local', d, 'bin', program));
  return [...new Set(out)];
}

/** A regular file this user may execute (not a folder, not a file without the execute bit). */
function runnable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first candidate that can be run, without running it (a caller that needs the version asks it beside its own work). */
export function firstRunnable(searched: string[]): string | null {
  return searched.find(runnable) ?? null;
}

/** What a program's --version says (null when it does not answer in time): `version` is null when the text names none. */
async function askVersion(path: string, versionOf: (output: string) => string | null): Promise<{ version: string | null } | null> {
  try {
    const { stdout } = await run(path, ['--version'], { timeout: 15_000 });
    return { version: versionOf(stdout) };
  } catch {
    return null;
  }
}

/** A program's version from its --version output, bounded in time; null when it does not answer. */
export const toolVersion = async (path: string, versionOf: (output: string) => string | null): Promise<string | null> =>
  (await askVersion(path, versionOf))?.version ?? null;

/** Finds a toolkit program and asks its version (bounded in time); absent is a report, not an error. */
export async function findTool(searched: string[], versionOf: (output: string) => string | null): Promise<ToolReport> {
  for (const path of searched.filter(runnable)) {
    const answer = await askVersion(path, versionOf);
    // present but not answering: keep looking
    if (answer) return { found: true, path, version: answer.version, searched };
  }
  return { found: false, path: null, version: null, searched };
}
