import { useMemo, useRef } from 'react';
import { useStore } from 'zustand';

import { explainPaste } from '../../core/explain/explain-paste';
import type { WorkbenchStore } from '../store/store';
import { PasteExplanation } from './PasteExplanation';

/**
 * Paste an error in any of the forms users paste; get what it means, why, and what to do. The paste is
 * kept in the store, so it is still there after a visit to another view.
 */
export function ExplainView({ store }: { store: WorkbenchStore }) {
  const text = useStore(store, (s) => s.explainText);
  const setText = useStore(store, (s) => s.setExplainText);
  const result = useRef<HTMLHeadingElement>(null);
  const e = useMemo(() => (text.trim() ? explainPaste(text) : null), [text]);
  return (
    <div className="explain-view">
      <div className="explain-input">
        <h2 id="explain-heading">Explain an error</h2>
        <textarea
          aria-label="Paste an error"
          placeholder={
            'Paste a CUDA error: "CUDA error: an illegal memory access was encountered", a CUDA_ERROR_* or cudaError* name, PyTorch\'s "CUDA out of memory" message, CuPy\'s, or compute-sanitizer output.'
          }
          value={text}
          onChange={(ev) => setText(ev.target.value)}
          onKeyDown={(ev) => {
            if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) result.current?.focus();
          }}
          spellCheck={false}
        />
        <div className="explain-actions">
          <button onClick={() => result.current?.focus()} disabled={!e} data-testid="explain-button">
            Explain
          </button>
          <span className="muted">{e ? 'Explained as you paste; Explain (Ctrl+Enter) moves to the explanation.' : 'Paste an error above.'}</span>
        </div>
      </div>
      {e && <PasteExplanation e={e} titleRef={result} />}
    </div>
  );
}
