import { useEffect, useRef } from 'react';
import type { editor } from 'monaco-editor/editor/editor.api';
import { useStore } from 'zustand';

import { getModel } from '../editor/models';
import { monaco } from '../editor/monaco-setup';
import { currentMonacoTheme } from '../layout/theme';
import type { WorkbenchStore } from '../store/store';

let instance: editor.IStandaloneCodeEditor | null = null;
const cursorListeners = new Set<(line: number, column: number) => void>();

/** Focuses the editor; false when there is none on screen. */
export function focusEditor(): boolean {
  if (!instance?.getModel()) return false;
  instance.focus();
  return true;
}

/** Set when the editor was asked for the focus before it was on screen (the gallery opened a sample from its own view). */
let focusWhenShown = false;

/** Focuses the editor now if it is on screen, else as soon as it shows a document. */
export function focusEditorSoon(): void {
  if (!focusEditor()) focusWhenShown = true;
}

/** Runs one of Monaco's own actions (e.g. its marker navigation) in the editor, focusing it first. */
export function runEditorAction(id: string): boolean {
  if (!focusEditor()) return false;
  void instance!.getAction(id)?.run();
  return true;
}

export function onCursorChange(listener: (line: number, column: number) => void): () => void {
  cursorListeners.add(listener);
  const at = instance?.getPosition();
  if (at) listener(at.lineNumber, at.column);
  return () => cursorListeners.delete(listener);
}

/** Moves the cursor to a position and shows it (from the problems list). */
export function revealPosition(line: number, column: number): void {
  if (!instance) return;
  instance.setPosition({ lineNumber: line, column });
  instance.revealPositionInCenter({ lineNumber: line, column });
  instance.focus();
}

export function EditorPane({ store, onSaveAs }: { store: WorkbenchStore; onSaveAs: () => void }) {
  const host = useRef<HTMLDivElement>(null);
  const activeId = useStore(store, (s) => s.activeId);
  const save = useStore(store, (s) => s.save);

  useEffect(() => {
    if (!host.current) return;
    instance = monaco.editor.create(host.current, {
      model: null,
      theme: currentMonacoTheme(),
      automaticLayout: true,
      fontSize: 13,
      minimap: { enabled: false },
      scrollBeyondLastLine: false,
      renderWhitespace: 'selection',
      // Monaco dims the last line's number on Linux (1.75:1 on the light theme, under WCAG's 4.5): drawn as the others are.
      renderFinalNewline: 'on',
      // The gutter column for compute-sanitizer's findings (a glyph per finding line, its sentence on hover).
      glyphMargin: true,
    });
    const changes = instance.onDidChangeModelContent(() => {
      const id = store.getState().activeId;
      if (id) store.getState().edited(id);
    });
    const cursor = instance.onDidChangeCursorPosition((e) => cursorListeners.forEach((l) => l(e.position.lineNumber, e.position.column)));
    const model = instance.onDidChangeModel(() => {
      const at = instance?.getPosition();
      if (at) cursorListeners.forEach((l) => l(at.lineNumber, at.column));
    });
    return () => {
      model.dispose();
      cursor.dispose();
      changes.dispose();
      instance?.dispose();
      instance = null;
    };
  }, [store]);

  const readOnly = useStore(store, (s) => s.documents.find((d) => d.id === s.activeId)?.readOnly ?? null);
  useEffect(() => {
    // A bundle's file is read-only: typing in it says so instead of changing it.
    instance?.updateOptions({ readOnly: readOnly !== null, readOnlyMessage: { value: 'Opened from a diagnostic bundle: read-only.' } });
  }, [readOnly]);

  useEffect(() => {
    if (!instance) return;
    instance.setModel(activeId ? (getModel(activeId) ?? null) : null);
    if (focusWhenShown && instance.getModel()) {
      focusWhenShown = false;
      instance.focus();
    }
    // Ctrl/Cmd+S saves; a never-saved document asks where.
    const binding = instance.addAction({
      id: 'workbench.save',
      label: 'Save',
      keybindings: [monaco.KeyMod.CtrlCmd | monaco.KeyCode.KeyS],
      run: () => {
        const state = store.getState();
        const doc = state.documents.find((d) => d.id === state.activeId);
        if (!doc) return;
        if (doc.path) void save(doc.id);
        else onSaveAs();
      },
    });
    return () => binding.dispose();
  }, [activeId, store, save, onSaveAs]);

  // A source link asked for a line of this document: show it, with the cursor there and the editor focused.
  const reveal = useStore(store, (s) => s.reveal);
  useEffect(() => {
    if (!instance || !reveal || reveal.docId !== activeId) return;
    revealPosition(reveal.line, reveal.column);
  }, [reveal, activeId]);

  return <div ref={host} className="monaco-host" data-testid="editor" />;
}
