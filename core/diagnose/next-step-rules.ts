import { formatBytes } from '../format';
import { firstRun, tried, type Evidence, type RunEvidence, type RunKind } from './evidence';
import { isCrashSignal, deathSignal } from './read-failure';

/** A re-run the evidence calls for: what it changes, and why it was chosen (said to the user as it starts). */
export interface NextStep {
  kind: RunKind;
  /** The rule that chose it. */
  rule: string;
  why: string;
}

type NextStepRule = { id: string; pick: (e: Evidence) => NextStep | null };

/** Memory faults memcheck can place (kernel, line, thread, address): illegal address, misaligned, launch failure, out of range. */
const MEMORY_FAULT_CODES: ReadonlySet<number> = new Set([700, 716, 719, 717, 718]);

const latest = (e: Evidence): RunEvidence | null => e.runs.at(-1) ?? null;
const asIs = (e: Evidence) => firstRun(e);
const where = (r: RunEvidence | null) => (r?.failure.userFrame ? ` (it blames ${basename(r.failure.userFrame.file)}:${r.failure.userFrame.line})` : '');
const basename = (p: string) => p.split('/').pop() ?? p;

/** The first run failed with a kernel fault: any later run is what the diagnosis knows of it. */
const faulted = (e: Evidence) => asIs(e)?.failure.category === 'kernel-fault';

/**
 * The next step, in priority order: the first rule that fires picks it. Each fires once at most (a step already
 * run, or refused, is not asked for again), and only on the evidence — never because a step is cheap.
 */
export const NEXT_STEP_RULES: readonly NextStepRule[] = [
  {
    id: 'async-error-needs-blocking-run',
    pick: (e) => {
      const run = asIs(e);
      if (!faulted(e) || tried(e, 'blocking') || run!.failure.launchBlocking === true) return null;
      return {
        kind: 'blocking',
        rule: 'async-error-needs-blocking-run',
        why: `A kernel failed (${run!.failure.error?.name ?? 'a kernel fault'}), and CUDA reports such errors late, at the next call that waits for the GPU${where(run)}. Re-running with CUDA_LAUNCH_BLOCKING=1 makes every launch wait for its kernel, so the traceback stops at the operation that failed.`,
      };
    },
  },
  {
    id: 'memory-fault-needs-memcheck',
    pick: (e) => {
      const run = asIs(e);
      const code = run?.failure.error?.code;
      if (!faulted(e) || code === undefined || !MEMORY_FAULT_CODES.has(code) || tried(e, 'memcheck')) return null;
      return {
        kind: 'memcheck',
        rule: 'memory-fault-needs-memcheck',
        why: `${run!.failure.error!.name} is a memory fault: memcheck watches every access, and names the kernel, its line, the thread and the address against the nearest allocation.`,
      };
    },
  },
  {
    id: 'device-assert-without-message-needs-memcheck',
    pick: (e) => {
      const run = asIs(e);
      if (!faulted(e) || run!.failure.error?.code !== 710 || run!.failure.asserts.length > 0 || tried(e, 'memcheck')) return null;
      return {
        kind: 'memcheck',
        rule: 'device-assert-without-message-needs-memcheck',
        why: 'A device-side assert failed but its message was not printed (the printf buffer was lost with the context): memcheck names the kernel and its line.',
      };
    },
  },
  {
    id: 'pytorch-oom-needs-history',
    pick: (e) => {
      const run = asIs(e);
      if (run?.failure.category !== 'out-of-memory' || run.failure.framework !== 'pytorch' || !e.python || tried(e, 'allocator-history')) return null;
      const request = run.failure.oom?.requestedBytes;
      return {
        kind: 'allocator-history',
        rule: 'pytorch-oom-needs-history',
        why: `PyTorch ran out of memory${request ? ` asking for ${formatBytes(request)}` : ''}. Its message gives totals only; re-running with the allocator's history recorded (a startup shim on PYTHONPATH, no change to the program) shows what was alive at the failure, by the line that allocated it.`,
      };
    },
  },
  {
    id: 'host-crash-needs-fault-handler',
    pick: (e) => {
      const run = asIs(e);
      if (!run || !isCrashSignal(deathSignal(run.exit)) || !e.python || tried(e, 'fault-handler') || run.failure.userFrame) return null;
      return {
        kind: 'fault-handler',
        rule: 'host-crash-needs-fault-handler',
        why: `Python died of ${deathSignal(run.exit)} and printed no traceback. Re-running with PYTHONFAULTHANDLER=1 makes Python print the line it was running when the signal came.`,
      };
    },
  },
  {
    id: 'host-crash-needs-memcheck',
    pick: (e) => {
      const run = asIs(e);
      if (!run || !isCrashSignal(deathSignal(run.exit)) || tried(e, 'memcheck')) return null;
      return {
        kind: 'memcheck',
        rule: 'host-crash-needs-memcheck',
        why: `A crash (${deathSignal(run.exit)}) can come from the host code or follow a device fault: memcheck tells which, since it sees every device access and every CUDA call's error.`,
      };
    },
  },
  ...(['memcheck', 'racecheck', 'initcheck'] as const).map((tool): NextStepRule => ({
    id: `thorough-${tool}`,
    pick: (e) => {
      const run = asIs(e);
      if (!e.thorough || run?.failure.category !== 'clean' || tried(e, tool) || latest(e)?.exit.cancelled) return null;
      return { kind: tool, rule: `thorough-${tool}`, why: THOROUGH_WHY[tool] };
    },
  })),
];

const THOROUGH_WHY: Record<'memcheck' | 'racecheck' | 'initcheck', string> = {
  memcheck:
    'The program exited cleanly, and --thorough asks for the sanitizer passes: memcheck with its leak check finds out-of-bounds and freed-memory accesses that did not crash, and device memory never freed.',
  racecheck: 'racecheck finds shared-memory races: results that depend on which warp ran first, right on one GPU and wrong on another.',
  initcheck: 'initcheck finds reads of device memory that nothing wrote (cudaMalloc does not clear it).',
};

/** The passes offered after a clean run that was not --thorough: said, not run. */
export const OFFERED_PASSES = ['memcheck', 'racecheck', 'initcheck'] as const;

export function nextStep(e: Evidence): NextStep | null {
  for (const rule of NEXT_STEP_RULES) {
    const step = rule.pick(e);
    if (step) return step;
  }
  return null;
}
