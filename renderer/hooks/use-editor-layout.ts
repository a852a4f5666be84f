import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import { flushSync } from 'react-dom';
import { useDefaultLayout, usePanelRef, type PanelImperativeHandle } from 'react-resizable-panels';
import { useStore } from 'zustand';

import { runEditorAction } from '../components/EditorPane';
import { preferences } from '../layout/storage';
import type { WorkbenchStore } from '../store/store';

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
 * The editor window's panels: the remembered column and row sizes, the source, output and side panels (each
 * hideable, tracked as hidden), showing, hiding and maximising them, the Memory tab's room, and the ways to the problems.
 */
export function useEditorLayout() {
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
  return { columns, rows, source, output, side, collapsed, track, toggleOutput, toggleSide, toggleMaximized, fitMemory, goToProblem, problems };
}

/**
 * What is shown even while its panel is hidden: a run's result (or an opened one), a sanitizer report or a re-run's
 * progress, a memory timeline opened from elsewhere bring the output panel back; a line opened while the output
 * is maximised (a link in a result, a finding) brings the editor back.
 */
export function useBringForward(store: WorkbenchStore, output: RefObject<PanelImperativeHandle | null>, source: RefObject<PanelImperativeHandle | null>) {
  const outcome = useStore(store, (s) => s.outcome);
  const refused = useStore(store, (s) => s.runRefused);
  const sanitizeSeq = useStore(store, (s) => s.sanitizeSeq);
  const memorySeq = useStore(store, (s) => s.memorySeq);
  const revealSeq = useStore(store, (s) => s.reveal?.seq ?? 0);
  useEffect(() => {
    if (outcome || refused) output.current?.expand();
  }, [outcome, refused, output]);
  useEffect(() => {
    if (sanitizeSeq > 0) output.current?.expand();
  }, [sanitizeSeq, output]);
  // And a memory timeline opened from elsewhere (a diagnosis's snapshot, a file): its tab is in the output panel.
  useEffect(() => {
    if (memorySeq > 0) output.current?.expand();
  }, [memorySeq, output]);
  useEffect(() => {
    if (revealSeq > 0 && source.current?.isCollapsed()) source.current.expand();
  }, [revealSeq, source]);
}
