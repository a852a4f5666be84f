import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
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

/** The first candidate that exists, without running anything (a caller that needs the version asks it beside its own work). */
export function firstExisting(searched: string[]): string | null {
  return searched.find((path) => existsSync(path)) ?? null;
}

/** A program's version from its --version output, bounded in time; null when it does not answer. */
export async function toolVersion(path: string, versionOf: (output: string) => string | null): Promise<string | null> {
  try {
    const { stdout } = await run(path, ['--version'], { timeout: 15_000 });
    return versionOf(stdout);
  } catch {
    return null;
  }
}

/** Finds a toolkit program and asks its version (bounded in time); absent is a report, not an error. */
export async function findTool(searched: string[], versionOf: (output: string) => string | null): Promise<ToolReport> {
  for (const path of searched) {
    if (!existsSync(path)) continue;
    try {
      const { stdout } = await run(path, ['--version'], { timeout: 15_000 });
      return { found: true, path, version: versionOf(stdout), searched };
    } catch {
      // present but not runnable: keep looking
    }
  }
  return { found: false, path: null, version: null, searched };
}
