import { useState } from 'react';
import { useStore } from 'zustand';

import { formatBytes } from '../../../core/format';
import type { SampleSeries } from '../../../core/memory/samples';
import type { Timeline } from '../../../core/memory/timeline';
import { encodeTimeline } from '../../../core/memory/timeline-wire';
import { resolveShownPath } from '../../../core/workspace/paths';
import type { WorkbenchStore } from '../../store/store';

/** What one request to the host may carry (serve's WebSocket takes 40 MiB a message), with room for the envelope. */
const MAX_REQUEST_CHARS = 36 * 1024 * 1024;

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
  const api = useStore(store, (s) => s.api);
  const startDir = useStore(store, (s) => s.info?.startDir ?? '/');
  const [name, setName] = useState('');
  const [said, setSaid] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const target = resolveShownPath(startDir, name);

  const send = (format: 'trace' | 'csv') => {
    setSaid(null);
    if (!target) return setSaid({ ok: false, text: `Give a file name (it goes into ${startDir}) or a full path to export to.` });
    const request = format === 'trace' ? { format, path: target, timeline: encodeTimeline(timeline!) } : { format, path: target, series: series! };
    const chars = JSON.stringify(request).length;
    if (chars > MAX_REQUEST_CHARS)
      return setSaid({
        ok: false,
        text: `This ${format === 'trace' ? 'timeline' : 'series'} is ${formatBytes(chars)} as data, more than the app hands its host in one piece. For a PyTorch snapshot, \`gpu-workbench memory FILE --trace out.json\` writes the trace from the command line; for a monitoring session, \`gpu-workbench monitor --trace\`/\`--csv\`.`,
      });
    setBusy(true);
    api.invoke('memory.export', request).then(
      (done) => {
        setBusy(false);
        setSaid({
          ok: true,
          text:
            format === 'trace'
              ? `Wrote ${done.path} (${formatBytes(done.bytes)}, ${done.events ?? 0} events): open it in https://ui.perfetto.dev or chrome://tracing.`
              : `Wrote ${done.path} (${formatBytes(done.bytes)}).`,
        });
      },
      (e: Error) => {
        setBusy(false);
        setSaid({ ok: false, text: e.message });
      },
    );
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
