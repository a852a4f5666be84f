import { execFile } from 'node:child_process';

import type { NvccTargets } from '../../core/doctor/facts';
import { parseNvccArchList } from '../../core/doctor/nvcc-targets';

/** More than any nvcc prints for a list (CUDA 13.0: 77 bytes); past it nvcc is stopped and the answer refused. */
export const MAX_LIST_OUTPUT_BYTES = 64 * 1024;

/** One list, asked of nvcc itself (no shell): killed at `timeoutMs` or past MAX_LIST_OUTPUT_BYTES of output. */
function askList(nvcc: string, flag: '--list-gpu-code' | '--list-gpu-arch', timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(nvcc, [flag], { timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: MAX_LIST_OUTPUT_BYTES, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (!error) return resolve(stdout);
      const e = error as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null; code?: unknown };
      const said = (stderr || stdout).trim().split('\n')[0]?.slice(0, 300);
      if (e.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER')
        return reject(new Error(`\`nvcc ${flag}\` printed more than ${MAX_LIST_OUTPUT_BYTES / 1024} KiB: not a list of architectures`));
      if (e.killed) return reject(new Error(`\`nvcc ${flag}\` did not answer within ${timeoutMs / 1000} s and was stopped`));
      reject(new Error(`\`nvcc ${flag}\` ${typeof e.code === 'number' ? `exited with ${e.code}` : `could not run (${e.message})`}${said ? `: ${said}` : ''}`));
    });
  });
}

/**
 * What nvcc builds for: `--list-gpu-code` (machine code) and `--list-gpu-arch` (PTX), asked side by side. An nvcc
 * older than CUDA 11.0 knows neither option, and says so: that is a failure to ask, reported as such.
 */
export async function nvccTargets(nvcc: string, timeoutMs: number): Promise<NvccTargets> {
  const [code, arch] = await Promise.all([askList(nvcc, '--list-gpu-code', timeoutMs), askList(nvcc, '--list-gpu-arch', timeoutMs)]);
  const sass = parseNvccArchList(code, 'sm');
  const ptx = parseNvccArchList(arch, 'compute');
  if (!sass.archs.length)
    throw new Error(`\`nvcc --list-gpu-code\` listed no architecture${sass.unreadable.length ? ` (it printed "${sass.unreadable[0]}")` : ''}`);
  return { path: nvcc, sass: sass.archs, ptx: ptx.archs };
}
