import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import { flushSync } from 'react-dom';
import { Group, Panel, Separator, useDefaultLayout, usePanelRef, type PanelImperativeHandle } from 'react-resizable-panels';
import { useStore } from 'zustand';

import { shortcutKeys } from '../../core/ui/shortcuts';
import { useCommand } from '../layout/commands';
import { platform } from '../layout/keyboard';
import { preferences } from '../layout/storage';
import type { WorkbenchStore } from '../store/store';
import { shownCompile } from '../../core/compile/shown-compile';
import { CompileFlags } from './CompileFlags';
import { EditorPane, runEditorAction } from './EditorPane';
import { KernelFacts } from './KernelFacts';
import { LaunchPanel } from './LaunchPanel';
import { LocateFileDialog } from './LocateFileDialog';
import { RunPanel } from './RunPanel';
import { OpenDialog, SaveAsDialog } from './OpenDialog';
import { OutputPanel } from './OutputPanel';
import { Prose } from './Prose';
import { StatusBar } from './StatusBar';
import { Tabs } from './Tabs';

const ARCHS = ['sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_89', 'sm_90', 'sm_100', 'sm_120'];

/** Focuses the Problems list: its first row, or its tab when there is none. */
function showProblems() {
  const tab = document.querySelector<HTMLElement>('[data-testid="output-tab-Problems"]');
  // Rendered now, so that the next key already lands on the list.
  flushSync(() => tab?.click());
  (document.querySelector<HTMLElement>('.problems li') ?? tab)?.focus();
}

/**
 * The Memory tab's timeline asks for the height it needs: the output panel grows to it (the editor keeping its least),
 * without being maximised; when another tab is chosen (null) it goes back, unless it was resized meanwhile.
 */
function useMemoryRoom(output: RefObject<PanelImperativeHandle | null>, source: RefObject<PanelImperativeHandle | null>) {
  const grown = useRef<{ from: number; to: number } | null>(null);
  return useCallback(
    (px: number | null) => {
      const panel = output.current;
      if (!panel || panel.isCollapsed() || source.current?.isCollapsed()) return;
      const now = panel.getSize().inPixels;
      if (px === null) {
        if (grown.current && Math.abs(now - grown.current.to) < 2) panel.resize(grown.current.from);
        grown.current = null;
        return;
      }
      if (now + 1 >= px) return;
      const from = grown.current?.from ?? now;
      panel.resize(px);
      grown.current = { from, to: px };
      // What it grew to (the editor's least may have held it short), once laid out: a size still that is ours to undo.
      requestAnimationFrame(() => {
        if (grown.current?.to === px) grown.current = { from, to: panel.getSize().inPixels };
      });
    },
    [output, source],
  );
}

/**
 * The editor's window: the file and its output on the left, kernels, launch and run on the right. Every
 * split can be dragged (or moved with the arrow keys on its separator), each panel can be hidden, the
 * output can take the whole height, and the sizes are remembered. A bundle opened through Open… goes where the app
 * shows it (onBundleOpened).
 */
export function EditorView({
  store,
  onBundleOpened,
  onDiagnosisOpened,
}: {
  store: WorkbenchStore;
  onBundleOpened?: () => void;
  onDiagnosisOpened?: () => void;
}) {
  const [dialog, setDialog] = useState<'open' | 'save' | null>(null);
  const activeId = useStore(store, (s) => s.activeId);
  const compile = useStore(store, (s) => (s.activeId ? s.compiles[s.activeId] : undefined));
  const options = useStore(store, (s) => s.compileOptions);
  const notice = useStore(store, (s) => s.notice);
  const outcome = useStore(store, (s) => s.outcome);
  const refused = useStore(store, (s) => s.runRefused);
  const sanitizeSeq = useStore(store, (s) => s.sanitizeSeq);
  const memorySeq = useStore(store, (s) => s.memorySeq);
  const doc = useStore(store, (s) => s.documents.find((d) => d.id === s.activeId));
  const { restoreDocuments, save, cancelCompile, setCompileOptions, dismissNotice, newDocument } = store.getState();
  const onSaveAs = useCallback(() => setDialog('save'), []);

  const columns = useDefaultLayout({ id: 'gpu-workbench.layout.columns', storage: preferences });
  const rows = useDefaultLayout({ id: 'gpu-workbench.layout.rows', storage: preferences });
  const source = usePanelRef();
  const output = usePanelRef();
  const side = usePanelRef();
  const [collapsed, setCollapsed] = useState({ source: false, output: false, side: false });
  const track = (panel: keyof typeof collapsed) => (size: { asPercentage: number }) =>
    setCollapsed((c) => (c[panel] === (size.asPercentage === 0) ? c : { ...c, [panel]: size.asPercentage === 0 }));

  const toggleOutput = () => (output.current?.isCollapsed() ? output.current.expand() : output.current?.collapse());
  const toggleSide = () => (side.current?.isCollapsed() ? side.current.expand() : side.current?.collapse());
  const toggleMaximized = () => {
    if (source.current?.isCollapsed()) return source.current.expand();
    output.current?.expand();
    source.current?.collapse();
  };
  const fitMemory = useMemoryRoom(output, source);
  const goToProblem = (action: string) => {
    source.current?.expand();
    runEditorAction(action);
  };
  const problems = () => {
    output.current?.expand();
    showProblems();
  };

  useCommand('save', () => (doc?.path ? void save(doc.id) : doc && setDialog('save')));
  useCommand('open', () => setDialog('open'));
  useCommand('toggleOutput', toggleOutput);
  useCommand('toggleSidePanel', toggleSide);
  useCommand('nextProblem', () => goToProblem('editor.action.marker.next'));
  useCommand('previousProblem', () => goToProblem('editor.action.marker.prev'));
  useCommand('focusProblems', problems);

  useEffect(() => {
    void restoreDocuments();
  }, [restoreDocuments]);
  // A run's result (or an opened one) is shown even if the output panel was hidden.
  useEffect(() => {
    if (outcome || refused) output.current?.expand();
  }, [outcome, refused, output]);
  // So is a sanitizer report (opened, or a re-run's), and a re-run's progress.
  useEffect(() => {
    if (sanitizeSeq > 0) output.current?.expand();
  }, [sanitizeSeq, output]);
  // And a memory timeline opened from elsewhere (a diagnosis's snapshot, a file): its tab is in the output panel.
  useEffect(() => {
    if (memorySeq > 0) output.current?.expand();
  }, [memorySeq, output]);

  // A line opened while the output panel is maximised (a link in a result, a finding) is shown: the editor comes back.
  const revealSeq = useStore(store, (s) => s.reveal?.seq ?? 0);
  useEffect(() => {
    if (revealSeq > 0 && source.current?.isCollapsed()) source.current.expand();
  }, [revealSeq, source]);

  const result = compile?.result ?? null;
  const shown = shownCompile(result, compile?.lastGood ?? null);
  const status = doc?.readOnly
    ? result
      ? `From the bundle (read-only): ${result.ok ? '✓' : '✗'} ${result.backend} · ${result.arch}, as recorded`
      : 'From the bundle (read-only): the run never compiled it'
    : compile?.status === 'compiling'
      ? 'Compiling…'
      : compile?.status === 'stopped'
        ? `Stopped: ${compile.message}`
        : result
          ? `${result.ok ? '✓' : '✗'} ${result.backend} · ${result.arch} · ${result.ms.toFixed(result.cached ? 1 : 0)} ms${result.cached ? ' (cached)' : ''}`
          : '';

  return (
    <main className="editor-view">
      <div className="toolbar" role="toolbar" aria-label="File and compile options">
        <button onClick={() => setDialog('open')} title={`Open (${shortcutKeys('open', platform)})`} data-testid="open-file">
          Open…
        </button>
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
        <button disabled={!doc} onClick={() => (doc?.path ? void save(doc.id) : setDialog('save'))} title={`Save (${shortcutKeys('save', platform)})`}>
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
        <CompileFlags options={options} setCompileOptions={setCompileOptions} />
        <span className="compile-status" data-testid="compile-status" role="status" title={status}>
          {status}
        </span>
        {compile?.status === 'compiling' && <button onClick={() => void cancelCompile()}>Cancel</button>}
      </div>
      {notice && (!notice.docId || notice.docId === activeId) && (
        <div className={notice.kind === 'error' ? 'banner' : 'banner info'} role="alert">
          <Prose text={notice.text} /> <button onClick={dismissNotice}>Dismiss</button>
        </div>
      )}
      <Group
        orientation="horizontal"
        id="workbench-columns"
        className="workbench"
        defaultLayout={columns.defaultLayout}
        onLayoutChanged={columns.onLayoutChanged}
      >
        <Panel id="panel-main" minSize="360px">
          <Group orientation="vertical" id="workbench-rows" defaultLayout={rows.defaultLayout} onLayoutChanged={rows.onLayoutChanged}>
            <Panel id="panel-source" minSize="100px" collapsible panelRef={source} onResize={track('source')}>
              <section className="source-pane" data-region="editor" aria-label="Editor" inert={collapsed.source} data-testid="source-pane">
                <Tabs store={store} />
                <div className="monaco-frame">
                  {activeId ? <EditorPane store={store} onSaveAs={onSaveAs} /> : <p className="muted pad">Open a file or a sample to start.</p>}
                </div>
              </section>
            </Panel>
            <Separator id="output-separator" className="separator" aria-label="Resize the editor and the output panel" />
            <Panel id="panel-output" defaultSize="40%" minSize="120px" collapsible panelRef={output} onResize={track('output')}>
              <section className="output-pane" data-region="output" aria-label="Output" inert={collapsed.output} data-testid="output-pane">
                <OutputPanel result={result} store={store} onMemoryHeight={fitMemory} />
                <div className="pane-actions">
                  <button
                    onClick={toggleMaximized}
                    aria-label={collapsed.source ? 'Restore the output panel' : 'Maximize the output panel'}
                    data-testid="maximize-output"
                  >
                    {collapsed.source ? 'Restore' : 'Maximize'}
                  </button>
                  <button
                    onClick={toggleOutput}
                    aria-label="Hide the output panel"
                    title={`Hide (${shortcutKeys('toggleOutput', platform)})`}
                    data-testid="hide-output"
                  >
                    Hide
                  </button>
                </div>
              </section>
            </Panel>
          </Group>
        </Panel>
        <Separator id="side-separator" className="separator" aria-label="Resize the side panel" />
        <Panel id="panel-side" defaultSize="30%" minSize="340px" maxSize="70%" collapsible panelRef={side} onResize={track('side')}>
          <aside className="facts" data-region="side" aria-label="Kernels, launch and run" inert={collapsed.side} data-testid="side-panel">
            <h2>Kernels</h2>
            <KernelFacts result={shown.result} stale={shown.stale} />
            <h2>Launch</h2>
            <LaunchPanel store={store} />
            <h2>Run</h2>
            <RunPanel store={store} />
          </aside>
        </Panel>
      </Group>
      <StatusBar
        result={result}
        outputShown={!collapsed.output}
        sideShown={!collapsed.side}
        onProblems={problems}
        onToggleOutput={toggleOutput}
        onToggleSide={toggleSide}
      />
      {dialog === 'open' && <OpenDialog store={store} onClose={() => setDialog(null)} onBundleOpened={onBundleOpened} onDiagnosisOpened={onDiagnosisOpened} />}
      {dialog === 'save' && <SaveAsDialog store={store} onClose={() => setDialog(null)} />}
      <LocateFileDialog store={store} />
    </main>
  );
}
