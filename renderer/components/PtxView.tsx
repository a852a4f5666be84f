import { useMemo, useState } from 'react';

import type { CompileResult } from '../../core/compile/compile-result';
import { mapPtxLines } from '../../core/compile/ptx-lines';
import { getModel } from '../editor/models';
import type { WorkbenchStore } from '../store/store';
import { FloatingTip } from './FloatingTip';
import { StaleNote } from './StaleNote';

/**
 * The PTX, each instruction tied to the source line it came from (the `.loc` lines of -lineinfo):
 * hovering shows that line, and the PTX lines of the same source line; clicking shows it in the editor.
 */
export function PtxView({
  result,
  stale,
  store,
  docId,
  sourceName,
}: {
  result: CompileResult | null;
  stale: boolean;
  store: WorkbenchStore;
  docId: string | null;
  sourceName: string;
}) {
  const ptx = result?.ptx ?? null;
  const map = useMemo(() => (ptx ? mapPtxLines(ptx, sourceName) : null), [ptx, sourceName]);
  const lines = useMemo(() => ptx?.split('\n') ?? [], [ptx]);
  const [hover, setHover] = useState<{ line: number; x: number; y: number } | null>(null);
  if (!ptx || !map) return <pre>(no PTX: the compile failed)</pre>;
  const sourceText = (line: number) => (docId ? (getModel(docId)?.getLineContent(Math.min(line, getModel(docId)!.getLineCount())) ?? '').trim() : '');
  return (
    <div className={`ptx-view${stale ? ' stale' : ''}`} data-testid="ptx-view">
      {stale && <StaleNote what="This PTX is" />}
      <pre className="ptx-lines" onMouseLeave={() => setHover(null)}>
        {lines.map((text, i) => {
          const source = map.sourceLines[i] ?? null;
          return (
            <div
              key={i}
              className={`ptx-line${source !== null ? ' mapped' : ''}${hover && source === hover.line ? ' same-source' : ''}`}
              data-source-line={source ?? undefined}
              onMouseMove={(e) => (source === null ? setHover(null) : setHover({ line: source, x: e.clientX, y: e.clientY }))}
              onClick={() => source !== null && docId && store.getState().revealInDocument(docId, source)}
            >
              {text || ' '}
            </div>
          );
        })}
      </pre>
      {hover && (
        <FloatingTip x={hover.x} y={hover.y} testId="ptx-tooltip">
          <div className="mono">
            {sourceName}:{hover.line}
          </div>
          <div className="mono muted">{sourceText(hover.line)}</div>
        </FloatingTip>
      )}
    </div>
  );
}
