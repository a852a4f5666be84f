import { useEffect, useState } from 'react';
import { useStore } from 'zustand';

import { onTablistKeyDown, rovingTabIndex } from '../layout/tablist-keys';
import type { WorkbenchStore } from '../store/store';
import { OpenSanitizerReportDialog } from './OpenSanitizerReportDialog';
import { SanitizeProgramDialog } from './SanitizeProgramDialog';
import { ProfileView } from './ProfileView';
import { CheckView } from './CheckView';
import { RunResultView } from './RunResultView';
import { SanitizerView } from './SanitizerView';

import type { CompileResult } from '../../core/compile/compile-result';
import { shownCompile } from '../../core/compile/shown-compile';
import { ProblemsPanel } from './ProblemsPanel';
import { PtxView } from './PtxView';
import { StaleNote } from './StaleNote';
import { MemoryView } from './timeline/MemoryView';

const VIEWS = ['Problems', 'Run', 'Check', 'Profile', 'Memory', 'Sanitizer', 'Log', 'PTX', 'SASS', 'Command'] as const;

export function OutputPanel({
  result,
  store,
  onMemoryHeight,
}: {
  result: CompileResult | null;
  store: WorkbenchStore;
  /** The Memory tab's timeline needs this much height (px), or the tab was left (null). */
  onMemoryHeight?: (px: number | null) => void;
}) {
  const api = useStore(store, (s) => s.api);
  const outcome = useStore(store, (s) => s.outcome);
  const refused = useStore(store, (s) => s.runRefused);
  const doc = useStore(store, (s) => s.documents.find((d) => d.id === s.activeId) ?? null);
  const lastGood = useStore(store, (s) => (s.activeId ? (s.compiles[s.activeId]?.lastGood ?? null) : null));
  // PTX and SASS stay from the last good compile (marked stale) while the text does not compile.
  const shown = shownCompile(result, lastGood);
  const [view, setView] = useState<(typeof VIEWS)[number]>('Problems');
  // A new run result (or an opened one) brings its tab forward; the run Profile made leaves the Profile tab in front.
  const profiled = useStore(store, (s) => s.outcomeOrigin?.profiled ?? false);
  useEffect(() => {
    if ((outcome && !profiled) || refused) setView('Run');
  }, [outcome, refused]);
  // A kernel profile (made, opened or a bundle's), one starting, or its error: the Profile tab.
  const profileSeq = useStore(store, (s) => s.kernelProfileSeq);
  const profiling = useStore(store, (s) => s.kernelProfileProgress !== null);
  useEffect(() => {
    if (profileSeq > 0) setView('Profile');
  }, [profileSeq]);
  // So does a sanitizer report, a re-run starting, or its error.
  const sanitizeSeq = useStore(store, (s) => s.sanitizeSeq);
  const findings = useStore(store, (s) => s.sanitizeReport?.groups.length ?? null);
  const sanitizing = useStore(store, (s) => s.sanitizeProgress !== null);
  useEffect(() => {
    if (sanitizeSeq > 0) setView('Sanitizer');
  }, [sanitizeSeq]);
  // Check everything starting, its report or its error brings the Check tab forward.
  const checkSeq = useStore(store, (s) => s.checkSeq);
  const checking = useStore(store, (s) => s.checkProgress !== null);
  useEffect(() => {
    if (checkSeq > 0) setView('Check');
  }, [checkSeq]);
  // A memory file opened, or monitoring started, brings the Memory tab forward.
  const memorySeq = useStore(store, (s) => s.memorySeq);
  useEffect(() => {
    if (memorySeq > 0) setView('Memory');
  }, [memorySeq]);
  // The room the timeline was given goes back when another tab is chosen.
  useEffect(() => {
    if (view !== 'Memory') onMemoryHeight?.(null);
  }, [view, onMemoryHeight]);
  const monitoring = useStore(store, (s) => s.monitor.running);
  const [openingReport, setOpeningReport] = useState(false);
  const [sanitizingProgram, setSanitizingProgram] = useState(false);
  const [sass, setSass] = useState<{ key: string; text: string } | null>(null);
  // SASS is disassembled on demand: a disassembler run is too slow for every keystroke.
  useEffect(() => {
    const good = shown.result;
    if (view !== 'SASS' || !good?.ok || !good.key || sass?.key === good.key) return;
    setSass({ key: good.key, text: 'Disassembling…' });
    api.invoke('compile.sass', { key: good.key }).then(
      (r) => setSass({ key: good.key, text: r.sass ?? '(no SASS: neither cuobjdump nor nvdisasm was found beside nvcc, on PATH or in /usr/local/cuda/bin)' }),
      (e: Error) => setSass({ key: good.key, text: e.message }),
    );
  }, [view, shown.result, api, sass?.key]);
  const count = result?.diagnostics.length ?? 0;
  return (
    <div className="output">
      <div className="output-tabs" role="tablist" aria-label="Output views" onKeyDown={onTablistKeyDown}>
        {VIEWS.map((v) => (
          <button
            key={v}
            role="tab"
            aria-selected={v === view}
            tabIndex={rovingTabIndex(v === view)}
            onClick={() => setView(v)}
            data-testid={`output-tab-${v}`}
          >
            {v}
            {v === 'Problems' && count > 0 ? ` (${count})` : ''}
            {v === 'Sanitizer' && (sanitizing ? ' …' : findings ? ` (${findings})` : '')}
            {v === 'Memory' && monitoring ? ' (live)' : ''}
            {v === 'Profile' && profiling ? ' …' : ''}
            {v === 'Check' && checking ? ' …' : ''}
          </button>
        ))}
      </div>
      <div className="output-body">
        {view === 'Problems' && <ProblemsPanel result={result} store={store} />}
        {view === 'Run' && <RunResultView store={store} onOpenReport={() => setOpeningReport(true)} />}
        {view === 'Check' && <CheckView store={store} />}
        {view === 'Profile' && <ProfileView store={store} />}
        {view === 'Memory' && <MemoryView store={store} onNeedHeight={onMemoryHeight} />}
        {view === 'Sanitizer' && (
          <SanitizerView store={store} onOpenReport={() => setOpeningReport(true)} onSanitizeProgram={() => setSanitizingProgram(true)} />
        )}
        {view === 'Log' && <pre data-testid="raw-log">{result?.log.trim() || '(the compiler printed nothing)'}</pre>}
        {view === 'PTX' && <PtxView result={shown.result} stale={shown.stale} store={store} docId={doc?.id ?? null} sourceName={doc?.name ?? ''} />}
        {view === 'SASS' && (
          <div className={shown.stale ? 'stale' : ''}>
            {shown.stale && <StaleNote what="This SASS is" />}
            <pre>
              {doc?.readOnly
                ? '(no SASS: a bundle carries the PTX, in the PTX tab, not the compiled image)'
                : shown.result?.ok
                  ? (sass?.text ?? '')
                  : '(no SASS: the compile failed)'}
            </pre>
          </div>
        )}
        {view === 'Command' && (
          <pre>
            {result ? `${result.command}\n\n${result.compilerVersion} · ${result.arch} · ${result.ms.toFixed(1)} ms${result.cached ? ' (cache hit)' : ''}` : ''}
          </pre>
        )}
      </div>
      {openingReport && <OpenSanitizerReportDialog store={store} onClose={() => setOpeningReport(false)} />}
      {sanitizingProgram && <SanitizeProgramDialog store={store} onClose={() => setSanitizingProgram(false)} />}
    </div>
  );
}
