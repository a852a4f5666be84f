import { useState } from 'react';

import type { CompileResult } from '../../core/compile/compile-result';
import { ProblemsPanel } from './ProblemsPanel';

const VIEWS = ['Problems', 'Log', 'PTX', 'SASS', 'Command'] as const;

export function OutputPanel({ result }: { result: CompileResult | null }) {
  const [view, setView] = useState<(typeof VIEWS)[number]>('Problems');
  const count = result?.diagnostics.length ?? 0;
  return (
    <div className="output">
      <div className="output-tabs" role="tablist">
        {VIEWS.map((v) => (
          <button key={v} role="tab" aria-selected={v === view} onClick={() => setView(v)}>
            {v}
            {v === 'Problems' && count > 0 ? ` (${count})` : ''}
          </button>
        ))}
      </div>
      <div className="output-body">
        {view === 'Problems' && <ProblemsPanel result={result} />}
        {view === 'Log' && <pre data-testid="raw-log">{result?.log.trim() || '(the compiler printed nothing)'}</pre>}
        {view === 'PTX' && <pre>{result?.ptx ?? '(no PTX: the compile failed)'}</pre>}
        {view === 'SASS' && <pre>{result?.sass ?? '(no SASS: cuobjdump or nvdisasm was not found beside nvcc, or the compile failed)'}</pre>}
        {view === 'Command' && (
          <pre>
            {result ? `${result.command}\n\n${result.compilerVersion} · ${result.arch} · ${result.ms.toFixed(1)} ms${result.cached ? ' (cache hit)' : ''}` : ''}
          </pre>
        )}
      </div>
    </div>
  );
}
