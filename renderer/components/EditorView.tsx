import { useCallback, useEffect, useState } from 'react';
import { useStore } from 'zustand';

import type { WorkbenchStore } from '../store/store';
import { EditorPane } from './EditorPane';
import { KernelFacts } from './KernelFacts';
import { LaunchPanel } from './LaunchPanel';
import { RunPanel } from './RunPanel';
import { OpenDialog, SaveAsDialog } from './OpenDialog';
import { OutputPanel } from './OutputPanel';
import { Tabs } from './Tabs';

const ARCHS = ['sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_89', 'sm_90', 'sm_100', 'sm_120'];

export function EditorView({ store }: { store: WorkbenchStore }) {
  const [dialog, setDialog] = useState<'open' | 'save' | null>(null);
  const activeId = useStore(store, (s) => s.activeId);
  const compile = useStore(store, (s) => (s.activeId ? s.compiles[s.activeId] : undefined));
  const options = useStore(store, (s) => s.compileOptions);
  const notice = useStore(store, (s) => s.notice);
  const doc = useStore(store, (s) => s.documents.find((d) => d.id === s.activeId));
  const { restoreDocuments, save, cancelCompile, setCompileOptions, dismissNotice, newDocument } = store.getState();
  const onSaveAs = useCallback(() => setDialog('save'), []);

  useEffect(() => {
    void restoreDocuments();
  }, [restoreDocuments]);

  const result = compile?.result ?? null;
  const status =
    compile?.status === 'compiling'
      ? 'Compiling…'
      : compile?.status === 'stopped'
        ? `Stopped: ${compile.message}`
        : result
          ? `${result.ok ? '✓' : '✗'} ${result.backend} · ${result.arch} · ${result.ms.toFixed(result.cached ? 1 : 0)} ms${result.cached ? ' (cached)' : ''}`
          : '';

  return (
    <div className="editor-view">
      <div className="toolbar">
        <button onClick={() => setDialog('open')}>Open…</button>
        <button
          onClick={() =>
            newDocument(
              'untitled.cu',
              '__global__ void kernel(float* out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = i;\n}\n',
            )
          }
        >
          New
        </button>
        <button disabled={!doc} onClick={() => (doc?.path ? void save(doc.id) : setDialog('save'))}>
          Save
        </button>
        <button disabled={!doc} onClick={() => setDialog('save')}>
          Save as…
        </button>
        <label>
          arch{' '}
          <select value={options.arch ?? ''} onChange={(e) => setCompileOptions({ arch: e.target.value || null })} aria-label="Architecture">
            <option value="">device default</option>
            {ARCHS.map((a) => (
              <option key={a}>{a}</option>
            ))}
          </select>
        </label>
        <label>
          <input type="checkbox" checked={!!options.debug} onChange={(e) => setCompileOptions({ debug: e.target.checked })} /> -G
        </label>
        <label>
          <input type="checkbox" checked={!!options.fastMath} onChange={(e) => setCompileOptions({ fastMath: e.target.checked })} /> fast math
        </label>
        <label>
          maxrregcount{' '}
          <input
            type="number"
            min={16}
            max={255}
            className="narrow"
            value={options.maxRegisters ?? ''}
            onChange={(e) => setCompileOptions({ maxRegisters: e.target.value ? Math.min(255, Math.max(16, Number(e.target.value))) : null })}
          />
        </label>
        <label>
          -D{' '}
          <input
            className="wide"
            placeholder="N=256,DEBUG"
            aria-label="Defines"
            defaultValue={(options.defines ?? []).join(',')}
            onBlur={(e) =>
              setCompileOptions({
                defines: e.target.value
                  .split(',')
                  .map((d) => d.trim())
                  .filter((d) => /^[A-Za-z_]\w*(=\S*)?$/.test(d)),
              })
            }
          />
        </label>
        <label>
          -I{' '}
          <input
            className="wide"
            placeholder="/path/to/include"
            aria-label="Include paths"
            defaultValue={(options.includePaths ?? []).join(',')}
            onBlur={(e) =>
              setCompileOptions({
                includePaths: e.target.value
                  .split(',')
                  .map((d) => d.trim())
                  .filter(Boolean),
              })
            }
          />
        </label>
        <label>
          <select value={options.std ?? 'c++17'} onChange={(e) => setCompileOptions({ std: e.target.value as 'c++17' })} aria-label="C++ standard">
            {['c++11', 'c++14', 'c++17', 'c++20'].map((v) => (
              <option key={v}>{v}</option>
            ))}
          </select>
        </label>
        <span className="compile-status" data-testid="compile-status">
          {status}
        </span>
        {compile?.status === 'compiling' && <button onClick={() => void cancelCompile()}>Cancel</button>}
      </div>
      {notice && (
        <div className={notice.kind === 'error' ? 'banner' : 'banner info'} role="alert">
          {notice.text} <button onClick={dismissNotice}>Dismiss</button>
        </div>
      )}
      <Tabs store={store} />
      <div className="editor-body">
        <div className="editor-main">
          {activeId ? <EditorPane store={store} onSaveAs={onSaveAs} /> : <p className="muted pad">Open a file or a sample to start.</p>}
          <OutputPanel result={result} store={store} />
        </div>
        <aside className="facts">
          <h2>Kernels</h2>
          <KernelFacts result={result} />
          <h2>Launch</h2>
          <LaunchPanel store={store} kernels={result?.kernels ?? []} />
          <h2>Run</h2>
          <RunPanel store={store} kernels={result?.kernels ?? []} />
        </aside>
      </div>
      {dialog === 'open' && <OpenDialog store={store} onClose={() => setDialog(null)} />}
      {dialog === 'save' && <SaveAsDialog store={store} onClose={() => setDialog(null)} />}
    </div>
  );
}
