import { useStore } from 'zustand';

import { noCountersMessage } from '../../core/kernel-profile/no-counters';
import type { Profile } from '../../core/kernel-profile/profile';
import { basenameOf } from '../../core/workspace/paths';
import { kernelProfileCurrent, kernelProfileDocument, type ShownKernelProfile } from '../store/kernel-profile-slice';
import type { WorkbenchStore } from '../store/store';
import { ProfileCompare, profileLabel } from './ProfileCompare';
import { ProfileFigures, ProfileFindings, ProfileLines } from './ProfileTables';
import { Prose } from './Prose';

const PHASES = {
  checks: 'checking the plan',
  compile: 'compiling',
  run: 'running',
  profile: 'profiling under Nsight Compute',
  diagnose: 'reading the result',
} as const;

function originWords(shown: ShownKernelProfile): string {
  const o = shown.origin;
  if (o.kind === 'file') return `Opened from ${o.path} (read-only)`;
  if (o.kind === 'bundle') return `From the bundle ${o.path} (read-only): its lines are marked on the bundle's own file`;
  return `Profiled here${o.planPath ? ` from ${o.planPath}` : ''}`;
}

/** What the profile measured, on what, with what. */
function ProfileHead({ profile }: { profile: Profile }) {
  const k = profile.kernel;
  return (
    <>
      <h3 data-testid="profile-headline">
        <span className="mono">{k.entry}</span> in <span className="mono">{basenameOf(k.sourceFile)}</span> on {profile.device.name}
      </h3>
      <p className="muted" data-testid="profile-meta">
        Step {k.step + 1}: grid ({k.grid.join(',')}) × block ({k.block.join(',')}) · recorded{' '}
        {profile.recordedAt.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}
        {profile.tool.ncuVersion ? ` · Nsight Compute ${profile.tool.ncuVersion}` : ''}
      </p>
    </>
  );
}

/** Exactly why there are no counters and how to allow them; what needs none follows it. */
function NoCounters({ profile }: { profile: Profile }) {
  if (!profile.noCounters) return null;
  const words = noCountersMessage(profile.noCounters.reason, profile.noCounters.detail, profile.kernel.entry);
  return (
    <section className="profile-no-counters" aria-label="Why there are no counters" data-testid="profile-no-counters">
      <h4 className="status-warn">
        <Prose text={words.headline} />
      </h4>
      <p className="prewrap">
        <Prose text={words.body} />
      </p>
    </section>
  );
}

/** Where the lines are marked, or why they are not: the file is not open, or has changed since it was profiled. */
function MarksNote({ store, shown }: { store: WorkbenchStore; shown: ShownKernelProfile }) {
  const docId = useStore(store, (s) => kernelProfileDocument(s, shown));
  // The editor's text is not in the store: an edit re-renders the note through the compile it starts.
  useStore(store, (s) => (docId ? s.compiles[docId] : null));
  const name = basenameOf(shown.profile.kernel.sourceFile);
  if (!shown.profile.counters) return null;
  if (!docId)
    return (
      <p className="muted" data-testid="profile-marks-note">
        {name} is not open here, so no lines are marked: a line below opens it.
      </p>
    );
  if (!kernelProfileCurrent(shown))
    return (
      <p className="status-warn" data-testid="profile-marks-note">
        {name} has changed since it was profiled: its lines are no longer marked, as they may not be the profiled ones. Profile again.
      </p>
    );
  return (
    <p className="muted" data-testid="profile-marks-note">
      Marked on {name}: a shade beside each line by its share of the samples, a mark on an uncoalesced line; hover for its figures.
    </p>
  );
}

/** The profile on screen, and the previous one beside it when Compare is on. */
function ProfileBody({ store, shown }: { store: WorkbenchStore; shown: ShownKernelProfile }) {
  const previous = useStore(store, (s) => s.kernelProfilePrevious);
  const comparing = useStore(store, (s) => s.kernelProfileComparing);
  const { profile } = shown;
  const open = (line: number) => void store.getState().revealProfileLine(line);
  const fileName = basenameOf(profile.kernel.sourceFile);
  return (
    <section className="profile-report" aria-label="Kernel profile">
      <ProfileHead profile={profile} />
      {previous && comparing && <ProfileCompare before={previous} after={shown} />}
      <NoCounters profile={profile} />
      <MarksNote store={store} shown={shown} />
      <ProfileFindings profile={profile} open={open} fileName={fileName} />
      <ProfileFigures profile={profile} />
      <ProfileLines profile={profile} open={open} fileName={fileName} />
    </section>
  );
}

/** The actions: compare with the previous profile, close this one; where it came from. */
function ProfileActions({ store, shown }: { store: WorkbenchStore; shown: ShownKernelProfile | null }) {
  const previous = useStore(store, (s) => s.kernelProfilePrevious);
  const comparing = useStore(store, (s) => s.kernelProfileComparing);
  const busy = useStore(store, (s) => s.kernelProfileProgress !== null);
  if (!shown) return null;
  return (
    <div className="run-actions">
      {previous && (
        <button
          aria-pressed={comparing}
          onClick={() => store.getState().setKernelProfileComparing(!comparing)}
          title={`Each figure before (${profileLabel(previous)}) and after (this profile)`}
          data-testid="profile-compare-toggle"
        >
          Compare with previous
        </button>
      )}
      {!busy && (
        <button onClick={() => store.getState().dismissKernelProfile()} title="Close this profile and take its marks off the editor">
          Close profile
        </button>
      )}
      <span className="muted">{originWords(shown)}</span>
    </div>
  );
}

/** The Profile tab: the profile on screen (made here, opened, or a bundle's), what it means, and its lines. */
export function ProfileView({ store }: { store: WorkbenchStore }) {
  const shown = useStore(store, (s) => s.kernelProfile);
  const progress = useStore(store, (s) => s.kernelProfileProgress);
  const error = useStore(store, (s) => s.kernelProfileError);
  return (
    <div className="profile-view" data-testid="profile-view">
      <ProfileActions store={store} shown={shown} />
      {progress && (
        <p role="status" data-testid="profile-progress">
          Profiling {progress.label}
          {progress.phase ? `: ${PHASES[progress.phase]}` : ''}…{' '}
          <button onClick={() => store.getState().cancelProfile()} data-testid="cancel-profile">
            Cancel profile
          </button>
        </p>
      )}
      {error && (
        <p className={/^Cancelled/.test(error) ? 'muted' : 'status-fail'} role="alert" data-testid="profile-error">
          <Prose text={error} />
        </p>
      )}
      {!shown && !progress && !error && (
        <p className="muted">
          No kernel profile. Profile the file’s launch (Profile, beside Run), or open a profile saved with{' '}
          <code className="inline-code">gpu-workbench profile --save</code> (Open…).
        </p>
      )}
      {shown && <ProfileBody store={store} shown={shown} />}
    </div>
  );
}
