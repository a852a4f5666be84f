import type { WorkbenchApi as ApiClient } from '../../core/api/channels';
import { planMatchesOutcome } from '../../core/plan/recorded-plan';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { basenameOf } from '../../core/workspace/paths';
import { resultSample, type SampleCandidate } from '../../core/workspace/source-link';

/** One gallery sample, both variants' kernel files, as a recorded result's own sample is looked for. */
async function loadSample(api: ApiClient, name: string): Promise<SampleCandidate | null> {
  const variants = await Promise.all((['broken', 'fixed'] as const).map((variant) => api.invoke('gallery.load', { name, variant }).catch(() => null)));
  const first = variants.find((v) => v !== null);
  if (!first) return null;
  const sourcePaths = [...new Set(variants.flatMap((v) => (v ? [v.sourcePath] : [])))];
  return { name, plan: first.plan, planPath: first.planPath, sourcePaths };
}

/**
 * The gallery sample a recorded result came from: the one named like the result file when its plan ran the
 * steps the result recorded, else the one sample whose plan did. Null when none (or several) fit.
 */
export async function findResultSample(api: ApiClient, resultPath: string, outcome: RunOutcome): Promise<SampleCandidate | null> {
  const matches = (plan: unknown) => planMatchesOutcome(plan, outcome);
  const names = (await api.invoke('gallery.list', {}).catch(() => [])).map((s) => s.name);
  const stem = basenameOf(resultPath).replace(/\.[^.]*$/, '');
  const likely = names.find((n) => n === stem);
  if (likely) {
    const own = await loadSample(api, likely);
    if (own && matches(own.plan)) return own;
  }
  const all = (await Promise.all(names.filter((n) => n !== likely).map((n) => loadSample(api, n)))).filter((s): s is SampleCandidate => s !== null);
  return resultSample(resultPath, all, matches);
}
