import type { BundleView } from '../../core/bundle/bundle-view';
import { planLaunches } from '../../core/plan/plan-launch';
import type { LaunchPlan } from '../../core/plan/plan-schema';
import { basenameOf } from '../../core/workspace/paths';

/**
 * The kernel a person looks at first: the one the diagnosis names; else the last launch before the diagnosed step
 * that was given the diagnosed buffer (a wrong result names the buffer, not the kernel that wrote it); else the
 * file the sanitizer's first finding is in; else the first launch's.
 */
export function mainKernel(view: BundleView): LaunchPlan['kernels'][number] | null {
  const plan = view.plan;
  if (!plan) return null;
  const byId = (id: string | undefined) => plan.kernels.find((k) => k.id === id);
  const d = view.outcome?.diagnosis;
  const named = byId(d?.kernel?.id);
  if (named) return named;
  if (d?.buffer) {
    const launches = planLaunches(plan).filter((l) => d.step === null || l.stepIndex <= d.step.index);
    const wrote = launches.reverse().find((l) => {
      const step = plan.steps[l.stepIndex];
      return step?.op === 'launch' && step.args.some((a) => 'buffer' in a && a.buffer === d.buffer);
    });
    if (byId(wrote?.kernelId)) return byId(wrote?.kernelId)!;
  }
  const file = view.sanitizer?.groups.find((g) => g.where?.path)?.where?.path;
  const inFile = file ? plan.kernels.find((k) => basenameOf(k.sourceName) === basenameOf(file)) : undefined;
  return inFile ?? byId(planLaunches(plan)[0]?.kernelId) ?? plan.kernels[0] ?? null;
}
