import { useStore } from 'zustand';

import type { WorkbenchStore } from '../../store/store';

/**
 * The allocations area's own options, under its name in the label column: how allocations are drawn, the peak,
 * and — only when the timeline has long idle stretches — whether they are drawn as breaks in the time axis.
 */
export function AllocationTools({ store, onPeak, hasPeak, hasGaps }: { store: WorkbenchStore; onPeak(): void; hasPeak: boolean; hasGaps: boolean }) {
  const mode = useStore(store, (s) => s.memoryMode);
  const gaps = useStore(store, (s) => s.memoryGaps);
  const state = store.getState();
  return (
    <span className="allocation-tools">
      <select value={mode} onChange={(e) => state.setMemoryMode(e.target.value as 'active' | 'address')} aria-label="How allocations are drawn">
        <option value="active">stacked</option>
        <option value="address">by address</option>
      </select>
      <button type="button" onClick={onPeak} disabled={!hasPeak} title="What was alive at the peak (P)">
        Peak
      </button>
      {hasGaps && (
        <label title="Long stretches where nothing happens are drawn narrow, with their length written on the axis, so that the rest keeps its width">
          <input type="checkbox" checked={gaps} onChange={(e) => state.setMemoryGaps(e.target.checked)} data-testid="memory-gaps" /> break idle gaps
        </label>
      )}
    </span>
  );
}
