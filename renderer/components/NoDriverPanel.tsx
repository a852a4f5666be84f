import { useStore } from 'zustand';

import type { Problem } from '../../core/discovery';
import type { WorkbenchStore } from '../store/store';

/** What the user sees when there is no usable driver: what happened, where we looked, what to do, and what works without it. */
export function NoDriverPanel({ problem, store }: { problem: Problem; store: WorkbenchStore }) {
  const profiles = useStore(store, (s) => s.profiles);
  const profileId = useStore(store, (s) => s.profileId);
  const chooseProfile = useStore(store, (s) => s.chooseProfile);
  const shipped = (profiles ?? []).filter((p) => p.source !== 'device');
  return (
    <div className="problem" role="alert" data-testid="no-driver">
      <h2>{problem.title}</h2>
      <p>{problem.detail}</p>
      <p>
        <strong>What to do:</strong> {problem.remedy}
      </p>
      <section className="profiles-offer" data-testid="profiles-offer">
        <h3>Without a GPU, check launches against a profile</h3>
        <p>
          These profiles hold real devices’ limits: the launch panel checks grid, block and shared memory against the one chosen, with the error the driver
          would return and the fix, before any launch.
        </p>
        <ul>
          {shipped.map((p) => (
            <li key={p.id}>
              {p.label}{' '}
              {p.id === profileId ? (
                <span className="status-ok">✓ in use</span>
              ) : (
                <button onClick={() => chooseProfile(p.id)} aria-label={`Use ${p.label}`}>
                  Use
                </button>
              )}
            </li>
          ))}
        </ul>
      </section>
      {problem.searched && problem.searched.length > 0 && (
        <>
          <h3>Searched</h3>
          <ul className="mono" data-testid="searched">
            {problem.searched.map((s) => (
              <li key={s}>{s}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
