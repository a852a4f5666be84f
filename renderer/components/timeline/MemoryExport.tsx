import { useState } from 'react';
import { useStore } from 'zustand';

import { formatBytes } from '../../../core/format';
import type { SampleSeries } from '../../../core/memory/samples';
import type { Timeline } from '../../../core/memory/timeline';
import { resolveShownPath } from '../../../core/workspace/paths';
import type { WorkbenchStore } from '../../store/store';

/**
 * Export of what the Memory tab shows: the timeline as a Chrome trace (Perfetto, chrome://tracing), and samples
 * (the monitor's, or a run's) as CSV, to a file the user names — shown against the folder file boxes start in (home, in the desktop app), written whole.
 */
export function MemoryExport({
  store,
  timeline,
  series,
  offerCsv = true,
}: {
  store: WorkbenchStore;
  timeline: Timeline | null;
  series: SampleSeries | null;
  /** Whether samples can be had here at all (a run or the monitor may sample; a snapshot never does): else no CSV button. */
  offerCsv?: boolean;
}) {
  const startDir = useStore(store, (s) => s.info?.startDir ?? '/');
  const [name, setName] = useState('');
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const target = resolveShownPath(startDir, name);

  const send = (format: 'trace' | 'csv') => {
    setSaid(null);
    if (!target) return setSaid({ ok: false, text: `Give a file name (it goes into ${startDir}) or a full path to export to.` });
    setBusy(true);
    void store
      .getState()
      .exportMemory(format, target)
      .then((done) => {
        setBusy(false);
        if (!done.ok) return setSaid({ ok: false, text: done.error });
        const { path, bytes, events } = done.value;
        setSaid({
          ok: true,
          text:
            format === 'trace'
              ? `Wrote ${path} (${formatBytes(bytes)}, ${events ?? 0} events): open it in https://ui.perfetto.dev or chrome://tracing.`
              : `Wrote ${path} (${formatBytes(bytes)}).`,
        });
      });
  };

  return (
    <div className="memory-bar" role="group" aria-label="Export">
      <input
        aria-label="Export file"
        placeholder="trace.json or /path/to/samples.csv"
        value={name}
        onChange={(e) => setName(e.target.value)}
        data-testid="memory-export-path"
      />
      <button type="button" disabled={!timeline || busy} onClick={() => send('trace')} data-testid="memory-export-trace">
        Export trace
      </button>
      {offerCsv && (
        <button
          type="button"
          disabled={!series || busy}
          onClick={() => send('csv')}
          title={series ? undefined : 'Only sampled memory (the monitor, or a run that sampled) has samples to export'}
          data-testid="memory-export-csv"
        >
          Export samples (CSV)
        </button>
      )}
      {target && name && <span className="muted">→ {target}</span>}
      {said && (
        <span role="status" className={said.ok ? 'status-pass' : 'status-fail'} data-testid="memory-export-said">
          {said.text}
        </span>
      )}
    </div>
  );
}
