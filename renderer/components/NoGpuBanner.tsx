import { useState } from 'react';
import { useStore } from 'zustand';

import { noGpuSummary } from '../../core/no-gpu';
import { hasGpu } from '../store/devices-slice';
import type { WorkbenchStore } from '../store/store';
import { Prose } from './Prose';

/** On a machine without a GPU, from the first load: that there is none, what still works and how, and what to do to run. */
export function NoGpuBanner({ store, onShowDevices }: { store: WorkbenchStore; onShowDevices: () => void }) {
  const devices = useStore(store, (s) => s.devices);
  const discovery = useStore(store, (s) => s.discovery);
  const profiles = useStore(store, (s) => s.profiles);
  const profilesKnown = useStore(store, (s) => s.profiles !== null || s.profilesError !== null);
  const [dismissed, setDismissed] = useState(false);
  const [expanded, setExpanded] = useState(false);
  // Said once it is known in full: which profiles there are is part of what still works.
  if (!devices || !profilesKnown || hasGpu({ devices }) || dismissed) return null;
  const summary = noGpuSummary({
    problem: devices.ok ? 'no CUDA device was found' : devices.problem.title,
    compiler: discovery?.nvrtc.loaded ? 'NVRTC' : discovery?.nvcc.found ? 'nvcc' : discovery ? null : 'nvcc',
    shippedProfiles: (profiles ?? []).filter((p) => p.source === 'shipped').map((p) => p.profile.device.name),
  });
  // One line (what is cut off ends in an ellipsis; More shows it all), its buttons always in reach.
  return (
    <section className={`no-gpu-banner${expanded ? ' expanded' : ''}`} role="region" aria-label="No GPU" data-testid="no-gpu-banner">
      <div className="banner-text" id="no-gpu-text">
        <strong>{summary.title}</strong> Still works:{' '}
        <ul className="still-works">
          {summary.stillWorks.map((w) => (
            <li key={w}>
              <Prose text={w} />
            </li>
          ))}
        </ul>
        . <Prose text={summary.toRun} />
      </div>
      <button onClick={() => setExpanded((e) => !e)} aria-expanded={expanded} aria-controls="no-gpu-text" className="link" data-testid="no-gpu-more">
        {expanded ? 'Less' : 'More'}
      </button>
      <button onClick={onShowDevices} className="link">
        What was searched
      </button>
      <button onClick={() => setDismissed(true)} aria-label="Hide this note">
        Hide
      </button>
    </section>
  );
}
