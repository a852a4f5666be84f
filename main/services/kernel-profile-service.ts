import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { AbortLike } from '../../core/api/channels';
import type { DeviceInfo } from '../../core/devices';
import { launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';
import { classifyNcuFailure } from '../../core/kernel-profile/no-counters';
import type { Profile, ProfileCounters } from '../../core/kernel-profile/profile';
import { chooseLaunch, effectiveFigures, launchesBefore, peakDramBytesPerSecond } from '../../core/kernel-profile/profile-launch';
import { HOST_PROGRAM_CHECKS } from '../../core/runner/run-choice';
import { STICKY_EXIT_CODE } from '../../core/runner/protocol';
import type { CompileService } from '../compile/compile-service';
import { sanitizerLauncher } from '../process/sanitizer-launcher';
import { runReader } from '../readers/reader-process';
import { RunnerPool } from '../runner/runner-pool';
import { BoundedOutput } from '../tools/bounded-output';
import { locateNcu, ncuVersion, runNcuExport } from '../tools/nsight-compute';
import { makePrivateFolder } from './private-folder';
import { runPlan, type RunOutcome } from './run-service';

export interface ProfileRequest {
  plan: unknown;
  planPath: string | null;
  /** The launch step to profile (0-based); the plan's first launch when absent. */
  step?: number | null;
  arch?: string;
  timeoutMs?: number;
  signal?: AbortLike;
  /** The device the plan runs on, for its peak bandwidth. */
  device?: DeviceInfo | null;
  /** Check the whole plan on the device before it runs and refuse one that would fail, as the app's Run does (RunOptions.validate). */
  validate?: boolean;
  /** Skip Nsight Compute: only what needs no counters (the GPU suite checks this path against ncu). */
  noCounters?: boolean;
  onPhase?: (phase: 'checks' | 'compile' | 'run' | 'profile' | 'diagnose') => void;
}

export interface ProfileAnswer {
  outcome: RunOutcome;
  /** Null when the plan could not run (the outcome's diagnosis says why). */
  profile: Profile | null;
}

/** The sections the profile reads, and the global-traffic counters beside them. */
export const NCU_SECTIONS = ['SpeedOfLight', 'Occupancy', 'LaunchStats', 'WarpStateStats', 'SourceCounters', 'MemoryWorkloadAnalysis'];
export const NCU_METRICS = [
  'l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum',
  'l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum',
  'l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum',
  'l1tex__t_requests_pipe_lsu_mem_global_op_st.sum',
  'dram__bytes_read.sum',
  'dram__bytes_write.sum',
];
const READY_UNDER_NCU_MS = 120_000;
const STOP_GRACE_UNDER_NCU_MS = 120_000;
const EXPORT_LIMITS = { timeoutMs: 120_000, maxBytes: 256 * 2 ** 20 };

/** ncu's arguments for one launch of `entry`: the launch after `skip` of the same kernel, the sections, a report file. */
export function ncuArguments(entry: string, skip: number, reportBase: string): string[] {
  const escaped = entry.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [
    ...['--kernel-name-base', 'function', '--kernel-name', `regex:^${escaped}$`, '--launch-skip', String(skip), '--launch-count', '1'],
    ...NCU_SECTIONS.flatMap((s) => ['--section', s]),
    ...['--metrics', NCU_METRICS.join(','), '--import-source', 'no', '--force-overwrite', '--export', reportBase],
  ];
}

/**
 * Profiles one launch of a plan: the plan runs as a host program (no guards, no second run) in a runner started under
 * Nsight Compute, which profiles that launch only; its report's raw and source pages are read in a reader process.
 * Without ncu, or without permission to read the counters, the plan runs plainly and the profile says why it has
 * no counters and gives what needs none.
 */
export async function profilePlan(request: ProfileRequest, services: { compiler: CompileService; pool: RunnerPool }): Promise<ProfileAnswer> {
  const parsed = launchPlanSchema.safeParse(request.plan);
  const plan = parsed.success ? parsed.data : null;
  const chosen = plan ? chooseLaunch(plan, request.step ?? null) : null;
  if (!plan || !chosen || 'error' in chosen) {
    const outcome = await plainRun(request, services);
    if (chosen && 'error' in chosen && outcome.status === 'ok') throw new Error(`Nothing to profile: ${chosen.error}.`);
    return { outcome, profile: null };
  }
  const ncu = request.noCounters ? { path: null, searched: [] } : locateNcu();
  if (!ncu.path) {
    const outcome = await plainRun(request, services);
    return {
      outcome,
      profile: describe(
        plan,
        chosen,
        outcome,
        request,
        null,
        { reason: 'no-ncu', detail: request.noCounters ? 'turned off' : ncu.searched.slice(0, 6).join(', ') },
        null,
      ),
    };
  }
  const underNcu = await runUnderNcu(ncu.path, plan, chosen, request, services.compiler);
  if (underNcu.counters || underNcu.outcome.status !== 'ok')
    return { outcome: underNcu.outcome, profile: describe(plan, chosen, underNcu.outcome, request, underNcu.counters, underNcu.failure, underNcu.version) };
  // No counters although the plan ran: its times under the tool are not the kernel's own, so it runs again plainly.
  const outcome = await plainRun(request, services);
  return { outcome, profile: describe(plan, chosen, outcome, request, null, underNcu.failure, underNcu.version) };
}

function plainRun(request: ProfileRequest, services: { compiler: CompileService; pool: RunnerPool }): Promise<RunOutcome> {
  return runPlan(asHostProgram(request.plan), services, {
    timeoutMs: request.timeoutMs ?? 60_000,
    planPath: request.planPath,
    signal: request.signal,
    arch: request.arch,
    validate: request.validate ?? false,
    onPhase: request.onPhase,
  });
}

type Chosen = Exclude<ReturnType<typeof chooseLaunch>, { error: string }>;

async function runUnderNcu(ncuPath: string, plan: LaunchPlan, chosen: Chosen, request: ProfileRequest, compiler: CompileService) {
  const entry = plan.kernels.find((k) => k.id === chosen.step.kernel)!;
  const dir = await makePrivateFolder('profile');
  const version = ncuVersion(ncuPath);
  const output = new BoundedOutput();
  let toolExit: number | null = null;
  let pool: RunnerPool | null = null;
  try {
    pool = new RunnerPool({
      launcher: sanitizerLauncher(
        ncuPath,
        ncuArguments(entry.entry, launchesBefore(plan, chosen.index), join(dir, 'profile')),
        (c) => output.push(c),
        (code) => (toolExit = code),
      ),
      warmSpare: false,
      readyTimeoutMs: READY_UNDER_NCU_MS,
      stopGraceMs: STOP_GRACE_UNDER_NCU_MS,
    });
    request.onPhase?.('profile');
    const outcome = await runPlan(
      asHostProgram(request.plan),
      { compiler, pool },
      {
        timeoutMs: request.timeoutMs ?? 600_000,
        planPath: request.planPath,
        signal: request.signal,
        arch: request.arch,
        validate: request.validate ?? false,
        onPhase: (phase) => request.onPhase?.(phase === 'run' ? 'profile' : phase),
      },
    );
    // ncu writes its report when the runner leaves.
    await pool.dispose();
    const text = output.text();
    const report = join(dir, 'profile.ncu-rep');
    const exitCode = toolExit === STICKY_EXIT_CODE ? 0 : toolExit;
    if (!existsSync(report))
      return {
        outcome,
        counters: null,
        version: await version,
        failure: classifyNcuFailure(text, exitCode) ?? { reason: 'not-profiled' as const, detail: text.slice(-2000) },
      };
    const counters = await readReport(ncuPath, report, dir, entry.entry, entry.sourceName, request.signal);
    return { outcome, counters, version: await version, failure: null };
  } finally {
    await pool?.dispose();
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

async function readReport(ncuPath: string, report: string, dir: string, entry: string, sourceFile: string, signal?: AbortLike): Promise<ProfileCounters> {
  const options = { ...EXPORT_LIMITS, signal };
  const [raw, source] = await Promise.all([
    runNcuExport(ncuPath, ['--import', report, '--csv', '--page', 'raw'], options),
    runNcuExport(ncuPath, ['--import', report, '--csv', '--page', 'source', '--print-source', 'cuda,sass'], options),
  ]);
  const rawPath = join(dir, 'raw.csv');
  const sourcePath = join(dir, 'source.csv');
  await Promise.all([writeFile(rawPath, raw, { mode: 0o600 }), writeFile(sourcePath, source, { mode: 0o600 })]);
  return (await runReader<ProfileCounters>({ kind: 'ncu-pages', rawPath, sourcePath, sourceFile, entry }, 'the profile', { signal })).value;
}

function describe(
  plan: LaunchPlan,
  chosen: Chosen,
  outcome: RunOutcome,
  request: ProfileRequest,
  counters: ProfileCounters | null,
  failure: { reason: NonNullable<Profile['noCounters']>['reason']; detail: string } | null,
  ncuVersionText: string | null,
): Profile | null {
  if (outcome.status !== 'ok') return null;
  const kernel = plan.kernels.find((k) => k.id === chosen.step.kernel)!;
  const record = outcome.result?.launches.find((l) => l.stepIndex === chosen.index);
  const effective = effectiveFigures(plan, chosen.step, record, counters?.durationNs ?? null);
  return {
    kind: 'gpu-workbench-profile',
    version: 1,
    recordedAt: new Date().toISOString(),
    device: { name: outcome.result?.device.name ?? request.device?.name ?? 'unknown', peakDramBytesPerSecond: peakDramBytesPerSecond(request.device ?? null) },
    kernel: { entry: kernel.entry, sourceFile: kernel.sourceName, step: chosen.index, grid: chosen.step.grid, block: chosen.step.block },
    tool: { ncuVersion: ncuVersionText, command: ['gpu-workbench', 'profile', ...(request.planPath ? ['--plan', request.planPath] : [])] },
    counters,
    noCounters: counters ? null : (failure ?? { reason: 'ncu-failed', detail: '' }),
    effective,
  };
}

function asHostProgram(plan: unknown): unknown {
  if (!plan || typeof plan !== 'object' || Array.isArray(plan)) return plan;
  const checks = (plan as { checks?: unknown }).checks;
  return { ...plan, checks: { ...(checks && typeof checks === 'object' ? checks : {}), ...HOST_PROGRAM_CHECKS } };
}
