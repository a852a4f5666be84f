import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { AbortLike } from '../../core/api/channels';
import type { DeviceInfo } from '../../core/devices';
import { counterAccess } from '../../core/kernel-profile/counter-permission';
import { ncuProgramArguments, ncuSourcePageArguments } from '../../core/kernel-profile/ncu-args';
import { classifyNcuFailure, noCountersMessage } from '../../core/kernel-profile/no-counters';
import type { Profile, ProfileCounters, ProgramProfile } from '../../core/kernel-profile/profile';
import { peakDramBytesPerSecond } from '../../core/kernel-profile/profile-launch';
import { runReader } from '../readers/reader-process';
import { locateNcu, ncuVersion, readCounterPermission, runNcuExport } from '../tools/nsight-compute';
import { runToolProgram } from '../tools/tool-program';
import { makePrivateFolder } from './private-folder';

export interface ProgramProfileRequest {
  command: string[];
  cwd: string;
  env?: Record<string, string>;
  /** A regular expression for the kernels' function names; every kernel when absent. */
  kernel?: string | null;
  /** Launches (of matching kernels) to let pass before the first profiled one. */
  skip?: number;
  /** Launches to profile: each one runs its kernel about 20 times over (ncu's passes). */
  count?: number;
  timeoutMs?: number;
  signal?: AbortLike;
  device?: DeviceInfo | null;
  onOutput?: (text: string, stream: 'stdout' | 'stderr') => void;
}

/** Nothing can be profiled here (no ncu, counters the driver keeps from this user): said before the program runs. */
export class ProgramProfileUnavailableError extends Error {
  override readonly name = 'ProgramProfileUnavailableError';
}

const EXPORT = { timeoutMs: 120_000, maxBytes: 256 * 2 ** 20 };
const SOURCE_EXPORTS_AT_ONCE = 4;

/**
 * Profiles a program the user gives (python3 train.py, ./app): the program runs under Nsight Compute, every process
 * it starts followed, and the first launches of its kernels are profiled with the same sections as a plan's launch;
 * the report's raw page and each launch's source page are read in a reader process. The program and ncu stop when
 * told, at the timeout, or with the host.
 */
export async function profileProgram(request: ProgramProfileRequest): Promise<ProgramProfile> {
  if (!request.command.length) throw new Error('No program to profile: give it after `--`.');
  const ncu = locateNcu();
  if (!ncu.path) throw new ProgramProfileUnavailableError(words('no-ncu', ncu.searched.slice(0, 6).join(', ')));
  const permission = await readCounterPermission();
  if (counterAccess(permission) === 'denied')
    throw new ProgramProfileUnavailableError(words('no-permission', `RmProfilingAdminOnly: 1 in ${permission.source}`));
  const dir = await makePrivateFolder('profile');
  try {
    const report = join(dir, 'profile');
    const version = ncuVersion(ncu.path);
    const args = ncuProgramArguments({
      kernel: request.kernel ?? null,
      skip: request.skip ?? 0,
      count: request.count ?? 5,
      reportBase: report,
      command: request.command,
    });
    const run = await runToolProgram(ncu.path, args, {
      name: 'gpu-workbench-profile',
      cwd: request.cwd,
      env: { ...process.env, ...request.env },
      timeoutMs: request.timeoutMs ?? 600_000,
      signal: request.signal,
      onOutput: request.onOutput,
    });
    const text = run.output.text();
    const exit = { code: run.code, signal: run.signal, timedOut: run.timedOut !== null, cancelled: run.cancelled };
    const base = {
      kind: 'gpu-workbench-program-profile' as const,
      version: 1 as const,
      recordedAt: new Date().toISOString(),
      command: request.command,
      cwd: request.cwd,
      exit,
      output: text.slice(-1_000_000),
    };
    if (!existsSync(`${report}.ncu-rep`)) {
      const failure = classifyNcuFailure(text, run.code) ?? {
        reason: 'not-profiled' as const,
        detail: 'ncu wrote no report: the program launched no kernel it could profile',
      };
      return { ...base, kernels: [], noCounters: failure };
    }
    const launches = await readLaunches(ncu.path, `${report}.ncu-rep`, dir, request.signal);
    const device = { name: request.device?.name ?? 'unknown', peakDramBytesPerSecond: peakDramBytesPerSecond(request.device ?? null) };
    const ncuVersionText = await version;
    const kernels = launches.map((launch, index): Profile => ({
      kind: 'gpu-workbench-profile',
      version: 1,
      recordedAt: base.recordedAt,
      device,
      kernel: {
        entry: launch.name.slice(0, 1024),
        sourceFile: (launch.counters.sourceFile ?? '').split('/').pop() ?? '',
        step: index,
        grid: launch.grid ?? [0, 0, 0],
        block: launch.block ?? [0, 0, 0],
      },
      tool: { ncuVersion: ncuVersionText, command: ['gpu-workbench', 'profile', '--', ...request.command].slice(0, 200) },
      counters: launch.counters,
      noCounters: null,
      effective: null,
    }));
    return { ...base, kernels, noCounters: kernels.length ? null : { reason: 'not-profiled', detail: 'the report holds no launch' } };
  } finally {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

const words = (reason: 'no-ncu' | 'no-permission', detail: string) => {
  const m = noCountersMessage(reason, detail, 'the program’s kernels');
  return `${m.headline}. ${m.body.replace(/ Still given below:.*$/, '')}`;
};

type Launch = { name: string; grid: [number, number, number] | null; block: [number, number, number] | null; counters: ProfileCounters };

/** The raw page (a row per launch), then each launch's own source page, a few exports at once. */
async function readLaunches(ncuPath: string, report: string, dir: string, signal?: AbortLike): Promise<Launch[]> {
  const raw = await runNcuExport(ncuPath, ['--import', report, '--csv', '--page', 'raw'], { ...EXPORT, signal });
  const rawPath = join(dir, 'raw.csv');
  await writeFile(rawPath, raw, { mode: 0o600 });
  const rows = raw.split('\n').filter((l) => /^"\d+"/.test(l)).length;
  const sourcePaths = Array.from({ length: rows }, (_, i) => join(dir, `source-${i}.csv`));
  for (let at = 0; at < rows; at += SOURCE_EXPORTS_AT_ONCE) {
    await Promise.all(
      sourcePaths.slice(at, at + SOURCE_EXPORTS_AT_ONCE).map(async (path, k) => {
        const page = await runNcuExport(ncuPath, ncuSourcePageArguments(report, at + k), { ...EXPORT, signal });
        await writeFile(path, page, { mode: 0o600 });
      }),
    );
  }
  return (await runReader<Launch[]>({ kind: 'ncu-program-pages', rawPath, sourcePaths }, 'the profile', { signal })).value;
}
