import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';

import type { ToolReport } from '../../core/discovery';
import { parseProfilingAdminOnly, type CounterPermission } from '../../core/kernel-profile/counter-permission';
import type { AbortLike } from '../../core/api/channels';
import { groupLeaderHandle } from '../process/launcher';
import { GROUP_REAPER } from '../process/sanitizer-launcher';
import { findTool, firstRunnable, toolCandidates, toolVersion } from './find-tool';
import { rememberedToolVersion } from './remembered-version';

/** Where Nsight Compute's CLI is looked for: GPU_WORKBENCH_NCU, CUDA_PATH/CUDA_HOME, PATH, the toolkits in /usr/local. */
export const ncuCandidates = (env: Record<string, string | undefined> = process.env): string[] => toolCandidates('ncu', 'GPU_WORKBENCH_NCU', env);

const versionOf = (stdout: string) => /Version ([\d.]+)/.exec(stdout)?.[1] ?? null;

export function findNcu(): Promise<ToolReport> {
  return findTool(ncuCandidates(), versionOf);
}

export function locateNcu(): { path: string | null; searched: string[] } {
  const searched = ncuCandidates();
  return { path: firstRunnable(searched), searched };
}

/** Its version (about half a second to ask), remembered on disk for the next process (remembered-version.ts). */
export const ncuVersion = (path: string): Promise<string | null> => rememberedToolVersion(path, () => toolVersion(path, versionOf));

/**
 * Runs `ncu` for a short job of its own (exporting a report's pages): in a process group with a reaper tied to the
 * host, killed at `timeoutMs` or on abort, its output kept up to `maxBytes` (more is an error, not a truncation).
 */
export function runNcuExport(path: string, args: string[], options: { timeoutMs: number; maxBytes: number; signal?: AbortLike }): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', GROUP_REAPER, 'gpu-workbench-ncu', path, ...args], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], detached: true });
    const handle = groupLeaderHandle(child, child.stdio[3]);
    const chunks: Buffer[] = [];
    let size = 0;
    let failure: string | null = null;
    const stop = (why: string) => {
      failure ??= why;
      handle.kill('SIGKILL');
    };
    const timer = setTimeout(() => stop(`ncu did not finish within ${options.timeoutMs / 1000} s`), options.timeoutMs);
    const onAbort = () => stop('cancelled');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > options.maxBytes) stop(`ncu's export is larger than ${Math.round(options.maxBytes / 2 ** 20)} MiB`);
      else chunks.push(chunk);
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
    child.on('error', (error) => stop(`ncu could not be started: ${error.message}`));
    child.on('close', (code) => {
      clearTimeout(timer);
      if (failure) reject(new Error(failure));
      else if (code !== 0) reject(new Error(`ncu ${args.join(' ')} ended with exit code ${code}: ${stderr.trim().slice(-500)}`));
      else resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

export const NVIDIA_PARAMS = '/proc/driver/nvidia/params';

/** The driver's word on counter access (a small proc file; read bounded, never from a FIFO one could put there). */
export async function readCounterPermission(path = NVIDIA_PARAMS): Promise<CounterPermission> {
  const administrator = process.getuid?.() === 0;
  try {
    const text = (await readFile(path, { encoding: 'utf8', flag: 'r' })).slice(0, 64 * 1024);
    return { restrictedToAdmins: parseProfilingAdminOnly(text), administrator, source: path };
  } catch {
    return { restrictedToAdmins: null, administrator, source: path };
  }
}
