import { useStore } from 'zustand';

import { blockerLines } from '../../core/plan/run-readiness';
import { dirnameOf } from '../../core/workspace/paths';
import type { LaunchView } from '../hooks/use-launch-view';
import type { WorkbenchStore } from '../store/store';
import { RunBlockers } from './RunBlockers';

const WHAT =
  'Runs the launch under Nsight Compute (ncu): sectors per request of each line’s loads and stores, throughput against the device’s peak, occupancy and where the warps wait, shown in the Profile tab and beside the lines. Without ncu or permission to read the counters, the launch’s time and effective bandwidth, and why.';

/**
 * Profile, beside Run: the plan Run would start, its launch step (the one the panel shows), under Nsight Compute.
 * Off, saying why, where it cannot work: the plan cannot run, launches nothing, or there is no GPU.
 */
export function ProfileButton({ store, view, plan }: { store: WorkbenchStore; view: LaunchView; plan: () => unknown }) {
  const progress = useStore(store, (s) => s.kernelProfileProgress);
  const running = useStore(store, (s) => s.running);
  const blocked = view.profileBlockers.length > 0;
  const start = () => {
    const current = plan();
    const { doc, run } = view;
    if (blocked || !doc || current === null) return;
    const planPath = run.plan?.planPath ?? null;
    void store.getState().profileKernel({
      plan: current,
      planPath,
      step: run.plan?.launchStep ?? null,
      docId: doc.id,
      label: planPath ?? `the plan of ${doc.name}`,
      sources: { documents: { [doc.name]: doc.id }, paths: run.plan?.sourcePaths ?? [], folders: planPath ? [dirnameOf(planPath)] : [] },
    });
  };
  return (
    <button
      onClick={start}
      disabled={progress !== null || running || blocked}
      title={blocked ? blockerLines(view.profileBlockers).join('\n') : WHAT}
      aria-describedby={blocked ? 'profile-blockers' : undefined}
      data-testid="profile-button"
    >
      {progress ? 'Profiling…' : 'Profile'}
    </button>
  );
}

/** Why Profile is off, where Run's list does not say it already: the reasons of its own, and whether Run's apply too. */
export function ProfileBlockers({ view }: { view: LaunchView }) {
  if (!view.profileBlockers.length) return null;
  const runReasons = new Set(view.blockers.map((b) => b.reason));
  const own = view.profileBlockers.filter((b) => !runReasons.has(b.reason));
  const shared = own.length < view.profileBlockers.length;
  return (
    <div className="run-blockers" id="profile-blockers" data-testid="profile-blockers">
      <strong>{shared ? (own.length ? 'Profile is off for the same reasons, and:' : 'Profile is off for the same reasons.') : 'Profile is off:'}</strong>
      {own.length > 0 && <RunBlockers blockers={own} />}
    </div>
  );
}
