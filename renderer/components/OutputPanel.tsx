import { useState } from 'react';
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
import { SassView } from './SassView';
import { OUTPUT_VIEWS, useOutputView } from '../hooks/use-output-view';
import { MemoryView } from './timeline/MemoryView';

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
  const doc = useStore(store, (s) => s.documents.find((d) => d.id === s.activeId) ?? null);
  const lastGood = useStore(store, (s) => (s.activeId ? (s.compiles[s.activeId]?.lastGood ?? null) : null));
  // PTX and SASS stay from the last good compile (marked stale) while the text does not compile.
  const shown = shownCompile(result, lastGood);
  const [view, setView] = useOutputView(store, onMemoryHeight);
  const profiling = useStore(store, (s) => s.kernelProfileProgress !== null);
  const findings = useStore(store, (s) => s.sanitizeReport?.groups.length ?? null);
  const sanitizing = useStore(store, (s) => s.sanitizeProgress !== null);
  const checking = useStore(store, (s) => s.checkProgress !== null);
  const monitoring = useStore(store, (s) => s.monitor.running);
  const [openingReport, setOpeningReport] = useState(false);
  const [sanitizingProgram, setSanitizingProgram] = useState(false);
  const count = result?.diagnostics.length ?? 0;
  return (
    <div className="output">
      <div className="output-tabs" role="tablist" aria-label="Output views" onKeyDown={onTablistKeyDown}>
        {OUTPUT_VIEWS.map((v) => (
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
        {view === 'SASS' && <SassView store={store} result={shown.result} stale={shown.stale} readOnly={!!doc?.readOnly} />}
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
