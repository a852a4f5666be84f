import { compareProfiles } from '../../core/kernel-profile/profile-compare';
import { comparedWords } from '../../core/kernel-profile/profile-view';
import { basenameOf } from '../../core/workspace/paths';
import type { ShownKernelProfile } from '../store/kernel-profile-slice';

/** Which profile, in words: its kernel and file, and where it came from. */
export function profileLabel(shown: ShownKernelProfile): string {
  const { profile, origin } = shown;
  const what = `${profile.kernel.entry} in ${basenameOf(profile.kernel.sourceFile)}`;
  if (origin.kind === 'file') return `${what}, opened from ${basenameOf(origin.path)}`;
  if (origin.kind === 'bundle') return `${what}, from the bundle ${basenameOf(origin.path)}`;
  return `${what}, profiled at ${new Date(profile.recordedAt).toLocaleTimeString('en-GB')}`;
}

const VERDICT_WORDS = { better: 'better', worse: 'worse', same: 'the same' } as const;

/** Each figure before (the previous profile) and after (the one on screen), and which way it went. */
export function ProfileCompare({ before, after }: { before: ShownKernelProfile; after: ShownKernelProfile }) {
  const figures = compareProfiles(before.profile, after.profile);
  return (
    <table className="profile-compare" data-testid="profile-compare">
      <caption>
        Before: {profileLabel(before)}. After: {profileLabel(after)}.
      </caption>
      <thead>
        <tr>
          <th scope="col">Figure</th>
          <th scope="col">Before</th>
          <th scope="col">After</th>
          <th scope="col">Change</th>
        </tr>
      </thead>
      <tbody>
        {figures.map((f) => {
          const w = comparedWords(f);
          return (
            <tr key={f.name} data-name={f.name} data-testid="profile-compare-row">
              <th scope="row">{f.name}</th>
              <td className="mono" data-testid="compare-before">
                {w.before}
              </td>
              <td className="mono" data-testid="compare-after">
                {w.after}
              </td>
              <td className={w.verdict === 'better' ? 'status-ok' : w.verdict === 'worse' ? 'status-fail' : undefined}>
                {w.change}
                {w.verdict && w.verdict !== 'same' ? ` (${VERDICT_WORDS[w.verdict]})` : ''}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
