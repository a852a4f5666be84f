import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

import type { ToolReport } from '../../core/discovery';

const run = promisify(execFile);

export function nvccCandidates(env: Record<string, string | undefined> = process.env): string[] {
  const out: string[] = [];
  if (env['GPU_WORKBENCH_NVCC']) out.push(env['GPU_WORKBENCH_NVCC']);
  for (const key of ['CUDA_PATH', 'CUDA_HOME']) if (env[key]) out.push(join(env[key]!, 'bin/nvcc'));
  for (const dir of (env['PATH'] ?? '').split(delimiter).filter(Boolean)) out.push(join(dir, 'nvcc'));
  out.push('/usr/local/cuda/bin/nvcc');
  return [...new Set(out)];
}

/** Finds nvcc and asks its version; absent is a report, not an error. */
export async function findNvcc(): Promise<ToolReport> {
  const searched = nvccCandidates();
  for (const path of searched) {
    if (!existsSync(path)) continue;
    try {
      const { stdout } = await run(path, ['--version'], { timeout: 15_000 });
      const release = /release ([\d.]+), (V[\d.]+)/.exec(stdout);
      return { found: true, path, version: release ? `CUDA ${release[1]} (${release[2]})` : (stdout.trim().split('\n').pop() ?? null), searched };
    } catch {
      // present but not runnable: keep looking
    }
  }
  return { found: false, path: null, version: null, searched };
}
