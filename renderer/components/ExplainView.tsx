import { useMemo, useRef } from 'react';
import { useStore } from 'zustand';

import { explainPaste } from '../../core/explain/explain-paste';
import { formatBytes } from '../../core/format';
import type { WorkbenchStore } from '../store/store';
import { Prose } from './Prose';

/**
 * Paste an error in any of the forms users paste; get what it means, why, and what to do. The paste is
 * kept in the store, so it is still there after a visit to another view.
 */
export function ExplainView({ store }: { store: WorkbenchStore }) {
  const text = useStore(store, (s) => s.explainText);
  const setText = useStore(store, (s) => s.setExplainText);
  const result = useRef<HTMLHeadingElement>(null);
  const e = useMemo(() => (text.trim() ? explainPaste(text) : null), [text]);
  const o = e?.oom;
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
      {e && (
        <section className="explanation" data-testid="explanation">
          <h2 className={e.recognized ? '' : 'muted'} ref={result} tabIndex={-1} data-testid="explanation-title">
            {e.title}
          </h2>
          {e.error && (
            <div className="mono muted">
              {e.error.name} ({e.error.code}){e.error.runtimeName && e.error.runtimeName !== e.error.name ? ` · ${e.error.runtimeName}` : ''}
              {e.error.sticky ? ' · sticky: the context is dead' : ''}
            </div>
          )}
          {o && (
            <table className="oom" data-testid="oom">
              <tbody>
                <tr>
                  <td>Requested</td>
                  <td className="num">{formatBytes(o.requestedBytes)}</td>
                </tr>
                {o.totalBytes !== null && (
                  <tr>
                    <td>GPU {o.gpu ?? ''} total</td>
                    <td className="num">{formatBytes(o.totalBytes)}</td>
                  </tr>
                )}
                {o.freeBytes !== null && (
                  <tr>
                    <td>Free</td>
                    <td className="num">{formatBytes(o.freeBytes)}</td>
                  </tr>
                )}
                {o.allowedBytes !== null && (
                  <tr>
                    <td>Allowed (limit the program set)</td>
                    <td className="num">{formatBytes(o.allowedBytes)}</td>
                  </tr>
                )}
                {o.framework === 'cupy' && o.reservedByFrameworkBytes !== null && (
                  <tr>
                    <td>Held by CuPy&apos;s pool</td>
                    <td className="num">{formatBytes(o.reservedByFrameworkBytes)}</td>
                  </tr>
                )}
                {o.allocatedByFrameworkBytes !== null && (
                  <tr>
                    <td>Held by PyTorch tensors</td>
                    <td className="num">{formatBytes(o.allocatedByFrameworkBytes)}</td>
                  </tr>
                )}
                {o.reservedUnallocatedBytes !== null && (
                  <tr>
                    <td>Cached by PyTorch, unused</td>
                    <td className="num">{formatBytes(o.reservedUnallocatedBytes)}</td>
                  </tr>
                )}
                {o.thisProcessBytes !== null && (
                  <tr>
                    <td>This process in all</td>
                    <td className="num">{formatBytes(o.thisProcessBytes)}</td>
                  </tr>
                )}
                {o.processes.map((p) => (
                  <tr key={p.pid}>
                    <td>Process {p.pid}</td>
                    <td className="num">{formatBytes(p.bytes)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {e.specifics.length > 0 && (
            <ul className="specifics">
              {e.specifics.map((s, i) => (
                <li key={i}>
                  <Prose text={s} />
                </li>
              ))}
            </ul>
          )}
          {e.explanation && (
            <>
              <p>
                <Prose text={e.explanation.summary} />
              </p>
              <h3>Likely causes</h3>
              <ul>
                {e.explanation.causes.map((c) => (
                  <li key={c}>
                    <Prose text={c} />
                  </li>
                ))}
              </ul>
              <h3>What to do</h3>
              <ul>
                {e.explanation.next.map((n) => (
                  <li key={n}>
                    <Prose text={n} />
                  </li>
                ))}
              </ul>
            </>
          )}
          {!e.explanation && e.error && <p>{e.error.doc}</p>}
        </section>
      )}
    </div>
  );
}
