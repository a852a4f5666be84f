import { setMaxListeners } from 'node:events';

import type { AbortLike } from '../../core/api/channels';
import { DEFAULT_RUN_TIMEOUT_MS } from '../../core/check/check-config';
import {
  CHECK_NAMES,
  couldNotRun,
  makeReport,
  planVerdict,
  type CheckEvent,
  type CheckName,
  type CheckReport,
  type CheckResult,
  type PlanReport,
} from '../../core/check/check-model';
import { judgeExpectation } from '../../core/check/expectation';
import {
  judgeCoalescing,
  judgeDeterminism,
  judgeOccupancy,
  judgeRun,
  judgeSanitizer,
  judgeValidator,
  neverRan,
  offCheck,
  type ProfiledLaunch,
  type ValidatorFacts,
} from '../../core/check/judge';
import { Slots } from '../../core/check/slots';
import { compileOptionsSchema } from '../../core/compile/compile-options';
import type { KernelFacts } from '../../core/compile/compile-result';
import { smArch, type DeviceInfo } from '../../core/devices';
import type { Problem } from '../../core/discovery';
import { noCountersMessage } from '../../core/kernel-profile/no-counters';
import { chooseLaunch } from '../../core/kernel-profile/profile-launch';
import { describeIssues, launchPlanSchema, type LaunchPlan } from '../../core/plan/plan-schema';
import type { RunOutcome } from '../../core/runner/run-outcome';
import type { SanitizerTool } from '../../core/sanitizer/findings';
import { deviceLimits, makeProfile, type DeviceProfile } from '../../core/validate/device-limits';
import { kernelLimitsFromFacts } from '../../core/validate/kernel-limits';
import { checkPlan } from '../../core/validate/plan-check';
import type { CompileService } from '../compile/compile-service';
import type { RunnerPool } from '../runner/runner-pool';
import { locateComputeSanitizer } from '../tools/compute-sanitizer';
import { locateNcu } from '../tools/nsight-compute';
import { SanitizerUnavailableError } from '../tools/sanitize-program';
import { checkedToolNode } from '../process/tool-node';
import type { CheckTarget } from './check-targets';
import { listDevices } from './device-service';
import { completeKernelFacts } from './kernel-facts-service';
import { profilePlan } from './kernel-profile-service';
import { machineMemory } from './plan-check-service';
import { runPlan } from './run-service';
import { sanitizePlan } from './sanitize-plan-service';

/**
 * `check` (issue 28): for each plan, the launch validator, a run with the determinism check, memcheck (with the leak
 * check), racecheck, initcheck and synccheck, and the profile's coalescing and occupancy — each judged by
 * core/check/judge.ts — into one report. The machine is looked at once: without a GPU, compute-sanitizer or Nsight
 * Compute, the checks that need it could not run, each with the reason. The GPU is shared out in slots
 * (core/check/slots.ts): a plain run or a run under one tool takes one (the four tools on a plan run at once), a
 * profile takes them all; several plans are under way at once.
 */

export interface CheckServices {
  compiler: CompileService;
  pool: RunnerPool;
}

export interface CheckOptions {
  /** Validate against this saved device instead of this machine's (--profile): the validator runs without a GPU. */
  profile?: DeviceProfile | null;
  arch?: string;
  signal?: AbortLike;
  onEvent?: (event: CheckEvent) => void;
  /** GPU slots; by default the smallest `concurrency` among the plans' configs. */
  concurrency?: number;
}

/** What the machine has, looked at once for the whole check. */
interface Machine {
  devices: DeviceInfo[] | null;
  driverVersion: string | null;
  /** Why there is no GPU to run on (null when there is one). */
  noGpu: Problem | null;
  /** Why compute-sanitizer cannot run (null when it is here). */
  noSanitizer: string | null;
  /** Why Nsight Compute cannot run (null when it is here). */
  noNcu: { headline: string; body: string } | null;
}

async function lookAtMachine(): Promise<Machine> {
  const devices = await listDevices();
  const sanitizer = locateComputeSanitizer();
  const ncu = locateNcu();
  // Both tools start the workbench's runner under a Node.js: without one (the desktop app, none found) neither can run.
  const node = sanitizer.path || ncu.path ? await checkedToolNode() : { path: '' };
  const noNode = 'problem' in node ? node.problem : null;
  const noNcu = !ncu.path
    ? noCountersMessage('no-ncu', ncu.searched.slice(0, 6).join(', '), 'the kernel')
    : noNode
      ? noCountersMessage('no-node', noNode, 'the kernel')
      : null;
  return {
    devices: devices.ok ? devices.devices : null,
    driverVersion: devices.ok ? devices.driverVersion : null,
    noGpu: devices.ok ? (devices.devices.length ? null : { title: 'No CUDA device', detail: '', remedy: '' }) : devices.problem,
    noSanitizer: !sanitizer.path
      ? `compute-sanitizer was not found (looked in ${sanitizer.searched.slice(0, 4).join(', ')}${sanitizer.searched.length > 4 ? ', …' : ''}). It ships with the CUDA toolkit; install it, or set GPU_WORKBENCH_COMPUTE_SANITIZER to its path.`
      : noNode,
    noNcu: noNcu ? { headline: noNcu.headline, body: noNcu.body.replace(/ Still given below:.*$/s, '') } : null,
  };
}

/** What every check of one plan shares: the plan, its settings, the machine, the slots, a way to tell each result. */
interface PlanContext {
  target: CheckTarget;
  plan: LaunchPlan;
  machine: Machine;
  services: CheckServices;
  options: CheckOptions;
  slots: Slots;
  /** One plain run (or driver query) at a time on the workbench's own runner. */
  plain: Slots;
  on: (check: CheckName) => boolean;
  tell: (result: CheckResult) => CheckResult;
}

const timed = async (work: () => Promise<CheckResult>): Promise<CheckResult> => {
  const started = performance.now();
  const r = await work();
  return r.status === 'passed' || r.status === 'failed' ? { ...r, ms: performance.now() - started } : r;
};

/** The validator's device: the saved profile asked for, else this machine's device the plan names. */
function validatorTarget(ctx: PlanContext): { profile: DeviceProfile; device: DeviceInfo | null } | string {
  if (ctx.options.profile) return { profile: ctx.options.profile, device: null };
  if (ctx.machine.noGpu) return `${ctx.machine.noGpu.title}: there is no device to check the plan against (pass --profile to check against a saved one).`;
  const device = ctx.machine.devices?.find((d) => d.ordinal === ctx.plan.device);
  if (!device) return `The plan asks for device ${ctx.plan.device}, and this machine has ${ctx.machine.devices?.length ?? 0}.`;
  return { profile: makeProfile(device, ctx.machine.driverVersion, new Date().toISOString()), device };
}

/** Each kernel's compiled resources for the validator (the driver's, where a GPU is here), and those that stay unknown. */
async function kernelFactsFor(ctx: PlanContext, arch: string, live: boolean): Promise<{ facts: Map<string, KernelFacts>; unknown: string[] }> {
  const facts = new Map<string, KernelFacts>();
  const unknown: string[] = [];
  for (const k of ctx.plan.kernels) {
    const request = { source: k.source, sourceName: k.sourceName, options: compileOptionsSchema.parse({ ...k.options, arch }), backend: 'auto' as const };
    const compiled = await ctx.services.compiler
      .compile(request, ctx.target.config.timeoutsMs.validator, null, ctx.options.signal)
      .catch((error: unknown) => ({ ok: false as const, kernels: [], error: error instanceof Error ? error.message : String(error) }));
    const result = 'error' in compiled || !live ? compiled : await ctx.plain.with(1, () => completeKernelFacts(compiled, ctx.services.pool));
    const found = result.kernels.find((f) => f.name === k.entry);
    if (found && found.registers !== null && found.sharedBytes !== null) facts.set(k.id, found);
    else if (!result.ok)
      unknown.push(`${k.sourceName} does not compile for ${arch}${'error' in result ? ` (${result.error})` : ''}, so ${k.entry}'s resources are unknown.`);
    else unknown.push(`The compiler did not report ${k.entry}'s registers and shared memory.`);
  }
  return { facts, unknown };
}

async function validatorCheck(ctx: PlanContext): Promise<CheckResult> {
  const target = validatorTarget(ctx);
  if (typeof target === 'string') return couldNotRun('validator', target);
  const limits = deviceLimits(target.profile.device);
  const { facts, unknown } = await kernelFactsFor(ctx, ctx.options.arch ?? smArch(target.profile.device), target.device !== null);
  const sources = new Map(ctx.plan.kernels.map((k) => [k.id, k.source]));
  const check = checkPlan(ctx.plan, limits, await machineMemory(target.device), (launch) => {
    const known = facts.get(launch.kernelId);
    return known ? kernelLimitsFromFacts(known, limits, sources.get(launch.kernelId)) : null;
  });
  const found: ValidatorFacts = { check, deviceName: limits.name, unknown };
  return judgeValidator(found);
}

/** The plain run, with the determinism check asked for even where the plan's buffers are over its default limit. */
function plainRun(ctx: PlanContext): Promise<RunOutcome> {
  const { config } = ctx.target;
  const runs = ctx.on('determinism') ? Math.max(1, ctx.plan.checks.determinismRuns ?? 1) : 0;
  return ctx.slots.with(1, () =>
    ctx.plain.with(1, () =>
      runPlan(ctx.target.plan, ctx.services, {
        timeoutMs: config.timeoutsMs.run ?? ctx.target.runTimeoutMs ?? DEFAULT_RUN_TIMEOUT_MS,
        arch: ctx.options.arch,
        planPath: ctx.target.planPath,
        determinismRuns: runs,
        // The driver's own answer: the validator is a check of its own.
        validate: false,
        signal: ctx.options.signal,
      }),
    ),
  );
}

/** Why the tools and the profile do not run after this plain run (null: they do). */
function toolsWontRun(run: RunOutcome | null): string | null {
  if (!run) return null;
  const why = neverRan(run);
  if (why) return `The plan never ran: ${why}.`;
  if (run.exit?.kind === 'watchdog')
    return `The plan did not finish in its time limit (the watchdog stopped it: ${run.diagnosis.headline}); under a tool it would run slower still.`;
  return null;
}

async function sanitizerCheck(ctx: PlanContext, tool: SanitizerTool, skip: string | null): Promise<CheckResult> {
  if (ctx.machine.noGpu) return couldNotRun(tool, `${ctx.machine.noGpu.title}: compute-sanitizer runs the plan on a GPU.`);
  if (ctx.machine.noSanitizer) return couldNotRun(tool, ctx.machine.noSanitizer);
  if (skip) return couldNotRun(tool, skip);
  try {
    const { outcome, report } = await ctx.slots.with(1, () =>
      sanitizePlan(
        {
          plan: ctx.target.plan,
          planPath: ctx.target.planPath,
          tool,
          options: { leakCheck: true },
          timeoutMs: ctx.target.config.timeoutsMs[tool],
          arch: ctx.options.arch,
          signal: ctx.options.signal,
        },
        ctx.services.compiler,
      ),
    );
    return judgeSanitizer(tool, report, outcome);
  } catch (error) {
    if (error instanceof SanitizerUnavailableError) return couldNotRun(tool, error.message);
    return couldNotRun(tool, `${tool} could not run: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The first launch of each kernel the plan launches: the launches the profile measures. */
function launchesToProfile(plan: LaunchPlan): { index: number; entry: string }[] {
  const seen = new Set<string>();
  const out: { index: number; entry: string }[] = [];
  plan.steps.forEach((s, index) => {
    if (s.op !== 'launch' || seen.has(s.kernel)) return;
    seen.add(s.kernel);
    out.push({ index, entry: plan.kernels.find((k) => k.id === s.kernel)?.entry ?? s.kernel });
  });
  return out;
}

/** Each kernel profiled under Nsight Compute with the GPU to itself, or why it could not be. */
async function profileLaunches(ctx: PlanContext): Promise<ProfiledLaunch[]> {
  const device = ctx.machine.devices?.find((d) => d.ordinal === ctx.plan.device) ?? null;
  const out: ProfiledLaunch[] = [];
  for (const launch of launchesToProfile(ctx.plan)) {
    if ('error' in chooseLaunch(ctx.plan, launch.index)) continue;
    const answer = await ctx.slots.exclusive(() =>
      ctx.plain.with(1, () =>
        profilePlan(
          {
            plan: ctx.target.plan,
            planPath: ctx.target.planPath,
            step: launch.index,
            arch: ctx.options.arch,
            timeoutMs: ctx.target.config.timeoutsMs.profile,
            signal: ctx.options.signal,
            device,
          },
          ctx.services,
        ),
      ),
    );
    out.push(
      answer.profile
        ? { entry: launch.entry, profile: answer.profile }
        : { entry: launch.entry, failed: `The plan did not run to the end under Nsight Compute: ${answer.outcome.diagnosis.headline}.` },
    );
  }
  return out;
}

/** Coalescing and occupancy from one set of profiles (the profile runs once for both). */
async function profileChecks(ctx: PlanContext, run: RunOutcome | null, skip: string | null): Promise<CheckResult[]> {
  const wanted = (['coalescing', 'occupancy'] as const).filter(ctx.on);
  if (!wanted.length) return [];
  const cannot = (why: string, details: string[] = []) => wanted.map((c) => couldNotRun(c, why, details));
  if (ctx.machine.noGpu) return cannot(`${ctx.machine.noGpu.title}: Nsight Compute profiles the plan on a GPU.`);
  if (ctx.machine.noNcu) return cannot(ctx.machine.noNcu.headline, [ctx.machine.noNcu.body]);
  if (skip) return cannot(skip);
  if (run && run.status !== 'ok') return cannot(`The plan did not run to the end, so there is no launch to profile: ${run.diagnosis.headline}.`);
  const started = performance.now();
  try {
    const launches = await profileLaunches(ctx);
    const ms = performance.now() - started;
    const judged = { coalescing: judgeCoalescing, occupancy: judgeOccupancy };
    return wanted.map((c) => {
      const r = judged[c](launches, ctx.target.config.thresholds);
      return r.status === 'passed' || r.status === 'failed' ? { ...r, ms } : r;
    });
  } catch (error) {
    return cannot(`The profile could not run: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A plan that could not be read or is not valid: the run fails with why (the plan itself is wrong); nothing else runs. */
function unreadablePlan(target: CheckTarget, problem: string, on: (c: CheckName) => boolean): CheckResult[] {
  return CHECK_NAMES.map((c) =>
    !on(c)
      ? offCheck(c, target.configPath)
      : c === 'run'
        ? { check: c, status: 'failed' as const, summary: problem, details: [], ms: null }
        : couldNotRun(c, 'The plan could not be read: the run check says why.'),
  );
}

/** Every check of one plan, in CHECK_NAMES order: the validator and the run first, then the tools and the profile together. */
async function checksOf(ctx: PlanContext): Promise<CheckResult[]> {
  const { tell, on } = ctx;
  const results = new Map<CheckName, CheckResult>();
  const keep = (r: CheckResult) => results.set(r.check, tell(r));
  if (on('validator')) keep(await timed(() => validatorCheck(ctx)));
  let run: RunOutcome | null = null;
  if (on('run') || on('determinism')) {
    if (ctx.machine.noGpu) {
      for (const c of ['run', 'determinism'] as const) if (on(c)) keep(couldNotRun(c, `${ctx.machine.noGpu.title}: the plan runs on a GPU.`));
    } else {
      const started = performance.now();
      run = await plainRun(ctx);
      const ms = performance.now() - started;
      for (const [c, judge] of [
        ['run', judgeRun],
        ['determinism', judgeDeterminism],
      ] as const)
        if (on(c)) {
          const r = judge(run);
          keep(r.status === 'passed' || r.status === 'failed' ? { ...r, ms } : r);
        }
    }
  }
  const skip = toolsWontRun(run);
  const tools = (['memcheck', 'racecheck', 'initcheck', 'synccheck'] as const).filter(on);
  await Promise.all([
    ...tools.map(async (tool) => keep(await timed(() => sanitizerCheck(ctx, tool, skip)))),
    profileChecks(ctx, run, skip).then((rs) => rs.forEach(keep)),
  ]);
  return CHECK_NAMES.map((c) => results.get(c) ?? offCheck(c, ctx.target.configPath));
}

async function checkOne(
  target: CheckTarget,
  machine: Machine,
  services: CheckServices,
  options: CheckOptions,
  slots: Slots,
  plain: Slots,
): Promise<PlanReport> {
  const started = performance.now();
  const on = (c: CheckName) => target.config.checks.includes(c);
  const tell = (result: CheckResult) => {
    options.onEvent?.({ kind: 'check', plan: target.label, result });
    return result;
  };
  const parsed = target.plan === null ? null : launchPlanSchema.safeParse(target.plan);
  let checks: CheckResult[];
  // A plan that cannot be read or parsed fails as it stands: nothing of it can run.
  if (!parsed || !parsed.success) {
    const problem = parsed ? `The launch plan is not valid:\n${describeIssues(parsed.error)}` : (target.readProblem ?? 'The plan could not be read.');
    checks = unreadablePlan(target, problem, on).map(tell);
  } else checks = await checksOf({ target, plan: parsed.data, machine, services, options, slots, plain, on, tell });
  const expectation = target.origin.kind === 'sample' ? judgeExpectation(target.origin.variant, target.expectedCheck, checks) : null;
  return {
    label: target.label,
    planPath: target.planPath,
    origin: target.origin,
    checks,
    expectation,
    configPath: target.configPath,
    verdict: planVerdict(checks, expectation),
    durationMs: performance.now() - started,
  };
}

/**
 * Checks every target and reports on them all. Plans go several at once (as many as there are GPU slots); the report
 * lists them in the order given. Never throws for what a plan does: each check's failure is its result.
 */
export async function checkPlans(targets: CheckTarget[], services: CheckServices, options: CheckOptions = {}): Promise<CheckReport> {
  const startedAt = new Date().toISOString();
  const started = performance.now();
  // Every compile and run of every plan listens on the one signal: many more than Node's default of 10.
  if (options.signal instanceof EventTarget) setMaxListeners(0, options.signal);
  const machine = await lookAtMachine();
  const size = options.concurrency ?? (targets.length ? Math.min(...targets.map((t) => t.config.concurrency)) : 1);
  const slots = new Slots(Math.max(1, size));
  const plain = new Slots(1);
  const reports: PlanReport[] = new Array<PlanReport>(targets.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (let i = next++; i < targets.length; i = next++) {
      reports[i] = await checkOne(targets[i]!, machine, services, options, slots, plain);
      options.onEvent?.({ kind: 'plan', report: reports[i]!, done: ++done, total: targets.length });
    }
  };
  await Promise.all(Array.from({ length: Math.min(slots.size, targets.length) }, worker));
  const device = machine.devices?.[0]?.name ?? (options.profile ? `${options.profile.device.name} (a saved profile, for the validator)` : null);
  return makeReport(reports, startedAt, performance.now() - started, device);
}
