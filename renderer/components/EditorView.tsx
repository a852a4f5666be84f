import { useCallback, useEffect, useState } from 'react';
import { Group, Panel, Separator } from 'react-resizable-panels';
import { useStore } from 'zustand';

import { shownCompile } from '../../core/compile/shown-compile';
import { shortcutKeys } from '../../core/ui/shortcuts';
import { useBringForward, useEditorLayout } from '../hooks/use-editor-layout';
import { useCommand } from '../layout/commands';
import { platform } from '../layout/keyboard';
import type { WorkbenchStore } from '../store/store';
import { EditorPane } from './EditorPane';
import { EditorToolbar } from './EditorToolbar';
import { KernelFacts } from './KernelFacts';
import { LaunchPanel } from './LaunchPanel';
import { LocateFileDialog } from './LocateFileDialog';
import { RunPanel } from './RunPanel';
import { OpenDialog, SaveAsDialog } from './OpenDialog';
import { OutputPanel } from './OutputPanel';
import { Prose } from './Prose';
import { StatusBar } from './StatusBar';
import { Tabs } from './Tabs';

/** The output panel's own buttons: maximise it (or restore the editor), and hide it. */
function OutputPaneActions({ maximized, onMaximize, onHide }: { maximized: boolean; onMaximize: () => void; onHide: () => void }) {
  return (
    <div className="pane-actions">
      <button onClick={onMaximize} aria-label={maximized ? 'Restore the output panel' : 'Maximize the output panel'} data-testid="maximize-output">
        {maximized ? 'Restore' : 'Maximize'}
      </button>
      <button onClick={onHide} aria-label="Hide the output panel" title={`Hide (${shortcutKeys('toggleOutput', platform)})`} data-testid="hide-output">
        Hide
      </button>
    </div>
  );
}

/** The note above the editor, while it concerns the document in front (or none in particular). */
function NoticeBanner({ store, activeId }: { store: WorkbenchStore; activeId: string | null }) {
  const notice = useStore(store, (s) => s.notice);
  if (!notice || (notice.docId && notice.docId !== activeId)) return null;
  return (
    <div className={notice.kind === 'error' ? 'banner' : 'banner info'} role="alert">
      <Prose text={notice.text} /> <button onClick={store.getState().dismissNotice}>Dismiss</button>
    </div>
  );
}

/**
 * The editor's window: the file and its output on the left, kernels, launch and run on the right. Every
 * split can be dragged (or moved with the arrow keys on its separator), each panel can be hidden, the
 * output can take the whole height, and the sizes are remembered (useEditorLayout). A bundle opened through Open… goes
 * where the app shows it (onBundleOpened).
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
  const doc = useStore(store, (s) => s.documents.find((d) => d.id === s.activeId));
  const { restoreDocuments, save } = store.getState();
  const onSaveAs = useCallback(() => setDialog('save'), []);
  const layout = useEditorLayout();
  const { source, output, side, collapsed, track } = layout;

  useCommand('save', () => (doc?.path ? void save(doc.id) : doc && setDialog('save')));
  useCommand('open', () => setDialog('open'));
  useCommand('toggleOutput', layout.toggleOutput);
  useCommand('toggleSidePanel', layout.toggleSide);
  useCommand('nextProblem', () => layout.goToProblem('editor.action.marker.next'));
  useCommand('previousProblem', () => layout.goToProblem('editor.action.marker.prev'));
  useCommand('focusProblems', layout.problems);

  useEffect(() => {
    void restoreDocuments();
  }, [restoreDocuments]);
  useBringForward(store, output, source);

  const result = compile?.result ?? null;
  const shown = shownCompile(result, compile?.lastGood ?? null);

  return (
    <main className="editor-view">
      <EditorToolbar store={store} doc={doc} compile={compile} options={options} onOpen={() => setDialog('open')} onSaveAs={onSaveAs} />
      <NoticeBanner store={store} activeId={activeId} />
      <Group
        orientation="horizontal"
        id="workbench-columns"
        className="workbench"
        defaultLayout={layout.columns.defaultLayout}
        onLayoutChanged={layout.columns.onLayoutChanged}
      >
        <Panel id="panel-main" minSize="360px">
          <Group orientation="vertical" id="workbench-rows" defaultLayout={layout.rows.defaultLayout} onLayoutChanged={layout.rows.onLayoutChanged}>
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
                <OutputPanel result={result} store={store} onMemoryHeight={layout.fitMemory} />
                <OutputPaneActions maximized={collapsed.source} onMaximize={layout.toggleMaximized} onHide={layout.toggleOutput} />
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
        onProblems={layout.problems}
        onToggleOutput={layout.toggleOutput}
        onToggleSide={layout.toggleSide}
      />
      {dialog === 'open' && <OpenDialog store={store} onClose={() => setDialog(null)} onBundleOpened={onBundleOpened} onDiagnosisOpened={onDiagnosisOpened} />}
      {dialog === 'save' && <SaveAsDialog store={store} onClose={() => setDialog(null)} />}
      <LocateFileDialog store={store} />
    </main>
  );
}
