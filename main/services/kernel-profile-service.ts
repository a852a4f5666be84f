import { existsSync } from 'node:fs';
import { open, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { AbortLike } from '../../core/api/channels';
import type { DeviceInfo } from '../../core/devices';
import { launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';
import { ncuArguments } from '../../core/kernel-profile/ncu-args';
import { counterAccess } from '../../core/kernel-profile/counter-permission';
import { classifyNcuFailure } from '../../core/kernel-profile/no-counters';
import type { Profile, ProfileCounters } from '../../core/kernel-profile/profile';
import { chooseLaunch, effectiveFigures, launchesBefore, peakDramBytesPerSecond } from '../../core/kernel-profile/profile-launch';
import { HOST_PROGRAM_CHECKS } from '../../core/runner/run-choice';
import { STICKY_EXIT_CODE } from '../../core/runner/protocol';
import type { CompileService } from '../compile/compile-service';
import { sanitizerLauncher } from '../process/sanitizer-launcher';
import { startWaitingReader } from '../readers/reader-process';
import { RunnerPool } from '../runner/runner-pool';
import { BoundedOutput } from '../tools/bounded-output';
import { locateNcu, ncuVersion, readCounterPermission, runNcuExport } from '../tools/nsight-compute';
import { checkedToolNode } from '../process/tool-node';
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
  /** The device the plan runs on, for its peak bandwidth: a promise lets its listing go on beside the run. */
  device?: DeviceInfo | null | Promise<DeviceInfo | null>;
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
  /** Where the time went under ncu (for the bench): the run with the tool attached and its exit, then the report's pages read. */
  timings?: { underToolMs: number; reportMs: number };
}

const READY_UNDER_NCU_MS = 120_000;
const STOP_GRACE_UNDER_NCU_MS = 120_000;
const EXPORT_LIMITS = { timeoutMs: 120_000, maxBytes: 256 * 2 ** 20 };

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
  const device = () => Promise.resolve(request.device ?? null);
  const withoutCounters = async (reason: 'turned-off' | 'no-ncu' | 'no-node' | 'no-permission', detail: string): Promise<ProfileAnswer> => {
    const outcome = await plainRun(request, services);
    return { outcome, profile: describe(plan, chosen, outcome, request, await device(), null, { reason, detail }, null) };
  };
  if (request.noCounters) return withoutCounters('turned-off', '');
  const ncu = locateNcu();
  if (!ncu.path) return withoutCounters('no-ncu', ncu.searched.slice(0, 6).join(', '));
  const node = await checkedToolNode();
  if ('problem' in node) return withoutCounters('no-node', node.problem);
  // The driver says up front when this user may not read the counters: no ncu run that can only fail.
  const permission = await readCounterPermission();
  if (counterAccess(permission) === 'denied') return withoutCounters('no-permission', `RmProfilingAdminOnly: 1 in ${permission.source}`);
  const underNcu = await runUnderNcu({ ncu: ncu.path, node: node.path }, plan, chosen, request, services.compiler);
  if (underNcu.counters || underNcu.outcome.status !== 'ok')
    return {
      outcome: underNcu.outcome,
      profile: describe(plan, chosen, underNcu.outcome, request, await device(), underNcu.counters, underNcu.failure, underNcu.version),
      timings: underNcu.timings,
    };
  // No counters although the plan ran: its times under the tool are not the kernel's own, so it runs again plainly.
  const outcome = await plainRun(request, services);
  return { outcome, profile: describe(plan, chosen, outcome, request, await device(), null, underNcu.failure, underNcu.version) };
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

async function runUnderNcu(tools: { ncu: string; node: string }, plan: LaunchPlan, chosen: Chosen, request: ProfileRequest, compiler: CompileService) {
  const ncuPath = tools.ncu;
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
        ncuArguments(entry.entry, launchesBefore(plan, chosen.index), join(dir, 'profile'), join(dir, 'source.csv')),
        (c) => output.push(c),
        (code) => (toolExit = code),
        tools.node,
      ),
      warmSpare: false,
      warmUp: false,
      readyTimeoutMs: READY_UNDER_NCU_MS,
      stopGraceMs: STOP_GRACE_UNDER_NCU_MS,
    });
    request.onPhase?.('profile');
    const started = performance.now();
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
        prestartRunner: true,
      },
    );
    // ncu writes its report when the runner leaves.
    await pool.dispose();
    const underToolMs = performance.now() - started;
    // ncu's messages go to its log with the source page: what it says about permissions is read from both.
    const text = `${output.text()}\n${await readLogHead(join(dir, 'source.csv'))}`;
    const report = join(dir, 'profile.ncu-rep');
    const exitCode = toolExit === STICKY_EXIT_CODE ? 0 : toolExit;
    if (!existsSync(report))
      return {
        timings: { underToolMs, reportMs: 0 },
        outcome,
        counters: null,
        version: await version,
        failure: classifyNcuFailure(text, exitCode) ?? { reason: 'not-profiled' as const, detail: text.slice(-2000) },
      };
    const counters = await readReport(ncuPath, report, dir, entry.entry, entry.sourceName, request.signal);
    return { outcome, counters, version: await version, failure: null, timings: { underToolMs, reportMs: performance.now() - started - underToolMs } };
  } finally {
    await pool?.dispose();
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** The raw page exported from the report while the pages' reader starts beside it (each takes a process's start-up). */
async function readReport(ncuPath: string, report: string, dir: string, entry: string, sourceFile: string, signal?: AbortLike): Promise<ProfileCounters> {
  const rawPath = join(dir, 'raw.csv');
  const sourcePath = join(dir, 'source.csv');
  const reader = startWaitingReader({ kind: 'ncu-pages', rawPath, sourcePath, sourceFile, entry }, 'the profile');
  try {
    const raw = await runNcuExport(ncuPath, ['--import', report, '--csv', '--page', 'raw'], { ...EXPORT_LIMITS, signal });
    await writeFile(rawPath, raw, { mode: 0o600 });
    return (await reader.read<ProfileCounters>({ signal })).value;
  } finally {
    reader.dispose();
  }
}

/** The first and last lines of ncu's log (its ==PROF==/==ERROR== messages), never more than 64 KiB of it. */
async function readLogHead(path: string): Promise<string> {
  const handle = await open(path, 'r').catch(() => null);
  if (!handle) return '';
  try {
    const { size } = await handle.stat();
    const take = async (at: number) => {
      const buffer = Buffer.alloc(Math.min(32 * 1024, Math.max(0, size - at)));
      await handle.read(buffer, 0, buffer.length, at);
      return buffer.toString('utf8');
    };
    return size <= 64 * 1024 ? await take(0) : `${await take(0)}\n${await take(size - 32 * 1024)}`;
  } finally {
    await handle.close();
  }
}

function describe(
  plan: LaunchPlan,
  chosen: Chosen,
  outcome: RunOutcome,
  request: ProfileRequest,
  device: DeviceInfo | null,
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
    device: { name: outcome.result?.device.name ?? device?.name ?? 'unknown', peakDramBytesPerSecond: peakDramBytesPerSecond(device) },
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
