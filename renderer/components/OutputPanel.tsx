import { useEffect, useState } from 'react';
import { useStore } from 'zustand';

import { onTablistKeyDown, rovingTabIndex } from '../layout/tablist-keys';
import type { WorkbenchStore } from '../store/store';
import { RunResultView } from './RunResultView';

import type { CompileResult } from '../../core/compile/compile-result';
import { ProblemsPanel } from './ProblemsPanel';

const VIEWS = ['Problems', 'Run', 'Log', 'PTX', 'SASS', 'Command'] as const;

export function OutputPanel({ result, store }: { result: CompileResult | null; store: WorkbenchStore }) {
  const api = useStore(store, (s) => s.api);
  const outcome = useStore(store, (s) => s.outcome);
  const [view, setView] = useState<(typeof VIEWS)[number]>('Problems');
  // A new run result (or an opened one) brings its tab forward.
  useEffect(() => {
    if (outcome) setView('Run');
  }, [outcome]);
  const [sass, setSass] = useState<{ key: string; text: string } | null>(null);
  // SASS is disassembled on demand: a disassembler run is too slow for every keystroke.
  useEffect(() => {
    if (view !== 'SASS' || !result?.ok || sass?.key === result.key) return;
    setSass({ key: result.key, text: 'Disassembling…' });
    api.invoke('compile.sass', { key: result.key }).then(
      (r) => setSass({ key: result.key, text: r.sass ?? '(no SASS: neither cuobjdump nor nvdisasm was found beside nvcc, on PATH or in /usr/local/cuda/bin)' }),
      (e: Error) => setSass({ key: result.key, text: e.message }),
    );
  }, [view, result, api, sass?.key]);
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
          </button>
        ))}
      </div>
      <div className="output-body">
        {view === 'Problems' && <ProblemsPanel result={result} />}
        {view === 'Run' && <RunResultView store={store} />}
        {view === 'Log' && <pre data-testid="raw-log">{result?.log.trim() || '(the compiler printed nothing)'}</pre>}
        {view === 'PTX' && <pre>{result?.ptx ?? '(no PTX: the compile failed)'}</pre>}
        {view === 'SASS' && <pre>{result?.ok ? (sass?.text ?? '') : '(no SASS: the compile failed)'}</pre>}
        {view === 'Command' && (
          <pre>
            {result ? `${result.command}\n\n${result.compilerVersion} · ${result.arch} · ${result.ms.toFixed(1)} ms${result.cached ? ' (cache hit)' : ''}` : ''}
          </pre>
        )}
      </div>
    </div>
  );
}
