import { formatBytes } from '../format';
import { elementReader } from './buffer-data';
import { elementSize, type ElementType } from './element-types';
import { bytesOf, type LaunchPlan } from './plan-schema';

/** Up to this much buffer memory the check runs unless turned off; above it, only when asked for. */
export const DETERMINISM_DEFAULT_LIMIT_BYTES = 256 * 1024 ** 2;

export interface DeterminismSetup {
  /** Extra runs to make after the first; 0 when the check does not run. */
  runs: number;
  /** The replay covers steps [0, replayEnd): everything but the trailing frees. */
  replayEnd: number;
  /** Why it does not run, in words; null when it runs. */
  skipped: string | null;
  off: boolean;
}

const skip = (reason: string, off = false): DeterminismSetup => ({ runs: 0, replayEnd: 0, skipped: reason, off });

/**
 * Whether and how a plan is run again on the same inputs. The replay reuses the first run's allocations,
 * so it needs them all alive: every free must come after the last launch and read-back. Memory no upload
 * initialises is re-poisoned before the replay, which needs poison on.
 */
export function planDeterminism(plan: LaunchPlan): DeterminismSetup {
  const requested = plan.checks.determinismRuns;
  if (requested === 0) return skip('turned off', true);
  const total = plan.buffers.reduce((sum, b) => sum + bytesOf(b), 0);
  if (requested === undefined && total > DETERMINISM_DEFAULT_LIMIT_BYTES)
    return skip(
      `the plan's buffers total ${formatBytes(total)}, over the ${formatBytes(DETERMINISM_DEFAULT_LIMIT_BYTES)} up to which it runs by default (--determinism-runs 1 runs it anyway)`,
    );
  if (!plan.steps.some((s) => s.op === 'launch')) return skip('the plan launches nothing');
  if (!plan.steps.some((s) => s.op === 'download')) return skip('the plan reads nothing back to compare');
  const replay = replayableEnd(plan);
  if (typeof replay === 'string') return skip(replay);
  const replayEnd = replay;
  if (!plan.checks.poison && readsUnuploaded(plan, replayEnd))
    return skip('poison is off, so memory no upload initialises cannot be put back as the first run found it');
  return { runs: requested ?? 1, replayEnd, skipped: null, off: false };
}

/**
 * Where a replay on the first run's allocations ends (before the trailing frees), or why there can be
 * none: a free before the last launch or read-back.
 */
export function replayableEnd(plan: LaunchPlan): number | string {
  let end = plan.steps.length;
  while (end > 0 && plan.steps[end - 1]!.op === 'free') end--;
  const early = plan.steps.slice(0, end).findIndex((s) => s.op === 'free');
  return early >= 0
    ? `step ${early + 1} frees a buffer before the plan's last launch or read-back, and the second run reuses the first run's allocations`
    : end;
}

/** A launch or read-back touches a buffer no upload has written before it. */
function readsUnuploaded(plan: LaunchPlan, end: number): boolean {
  const uploaded = new Set<string>();
  for (const step of plan.steps.slice(0, end)) {
    if (step.op === 'upload') uploaded.add(step.buffer);
    const touched = step.op === 'launch' ? step.args.flatMap((a) => ('buffer' in a ? [a.buffer] : [])) : step.op === 'download' ? [step.buffer] : [];
    if (touched.some((b) => !uploaded.has(b))) return true;
  }
  return false;
}

export interface BitwiseDifference {
  differing: number;
  firstIndex: number;
  /** Element firstIndex in each run, as numbers. */
  first: number;
  second: number;
}

/** Elements whose bytes differ between two read-backs of the same buffer; null when they are identical. */
export function diffBitwise(type: ElementType, a: Uint8Array, b: Uint8Array): BitwiseDifference | null {
  const size = elementSize(type);
  const n = Math.floor(Math.min(a.byteLength, b.byteLength) / size);
  let differing = 0;
  let firstIndex = -1;
  for (let i = 0; i < n; i++) {
    const o = i * size;
    for (let k = 0; k < size; k++) {
      if (a[o + k] !== b[o + k]) {
        differing++;
        if (firstIndex < 0) firstIndex = i;
        break;
      }
    }
  }
  if (differing === 0) return null;
  return { differing, firstIndex, first: elementReader(type, a)(firstIndex), second: elementReader(type, b)(firstIndex) };
}

/** Lines that use floating-point-capable atomics: additions in another order give other roundings. */
export function floatAtomicLines(source: string): number[] {
  const lines: number[] = [];
  source.split('\n').forEach((text, i) => {
    const code = text.replace(/\/\/.*$/, '');
    if (/\batomic(?:Add|Sub)(?:_block|_system)?\s*\(/.test(code) || /\bunsafeAtomicAdd\s*\(/.test(code) || /\.fetch_add\s*\(/.test(code)) lines.push(i + 1);
  });
  return lines;
}
