import { stepLabel } from '../plan/step-label';
import type { LaunchPlan } from '../plan/plan-schema';
import type { Severity } from './finding';

/**
 * The plan's steps in their order, before it runs: each buffer allocated before a step uses it, not allocated twice,
 * not copied or freed once freed. The runner refuses such a step when it reaches it ("used before it is allocated"),
 * after the steps before it ran; said here, it is refused before anything runs, with the step and the fix. A launch
 * given a buffer an earlier step freed is only a warning: the runner passes the dangling pointer, as a host program
 * would, and the use-after-free sample does it on purpose.
 */
export interface OrderFinding {
  rule: 'used-before-alloc' | 'used-after-free' | 'allocated-twice' | 'launch-after-free';
  severity: Severity;
  stepIndex: number;
  buffer: string;
  message: string;
  fix: string;
  /** As the launch panel's findings have them: a step out of order causes no CUDA error of its own. */
  driverError: null;
  runtimeError: null;
}

const VERB = { upload: 'uploads', download: 'reads back', free: 'frees' } as const;

/** Every step that uses a buffer out of order, in step order. */
export function checkStepOrder(plan: Pick<LaunchPlan, 'steps' | 'kernels'>): OrderFinding[] {
  const allocatedAt = new Map<string, number>();
  const freedAt = new Map<string, number>();
  const out: OrderFinding[] = [];
  const say = (stepIndex: number, buffer: string, rule: OrderFinding['rule'], message: string, fix: string) =>
    out.push({
      rule,
      severity: rule === 'launch-after-free' ? 'warning' : 'error',
      stepIndex,
      buffer,
      message: `Step ${stepIndex + 1} (${stepLabel(plan.steps[stepIndex]!, plan)}) ${message}`,
      fix,
      driverError: null,
      runtimeError: null,
    });
  plan.steps.forEach((step, i) => {
    if (step.op === 'alloc') {
      const held = allocatedAt.get(step.buffer);
      if (held !== undefined)
        say(
          i,
          step.buffer,
          'allocated-twice',
          `allocates \`${step.buffer}\` again; step ${held + 1} allocated it and nothing freed it.`,
          'Remove one of the two alloc steps, or free it between them.',
        );
      allocatedAt.set(step.buffer, i);
      freedAt.delete(step.buffer);
      return;
    }
    const buffers = step.op === 'launch' ? [...new Set(step.args.flatMap((a) => ('buffer' in a ? [a.buffer] : [])))] : 'buffer' in step ? [step.buffer] : [];
    for (const name of buffers) {
      if (allocatedAt.has(name)) continue;
      const freed = freedAt.get(name);
      const verb = step.op === 'launch' ? 'passes' : VERB[step.op as keyof typeof VERB];
      if (freed === undefined)
        say(i, name, 'used-before-alloc', `${verb} \`${name}\` before any step allocates it.`, `Move an alloc step for \`${name}\` before step ${i + 1}.`);
      else if (step.op === 'launch')
        say(
          i,
          name,
          'launch-after-free',
          `passes \`${name}\`, which step ${freed + 1} freed: the kernel gets a dangling pointer (a use after free).`,
          `Move the free of \`${name}\` after its last use.`,
        );
      else say(i, name, 'used-after-free', `${verb} \`${name}\` after step ${freed + 1} freed it.`, `Move the free of \`${name}\` after its last use.`);
    }
    if (step.op === 'free' && allocatedAt.has(step.buffer)) {
      allocatedAt.delete(step.buffer);
      freedAt.set(step.buffer, i);
    }
  });
  return out;
}

/** The order errors that stop the run, one line each, with the fix. */
export const orderRefusals = (findings: OrderFinding[]): string[] => findings.filter((f) => f.severity === 'error').map((f) => `${f.message} Fix: ${f.fix}`);
