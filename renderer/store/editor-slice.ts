import type { StateCreator } from 'zustand';

import type { CompileOptionsInput } from '../../core/compile/compile-options';
import type { CompileResult } from '../../core/compile/compile-result';
import type { LaunchForm } from '../../core/plan/plan-launch';
import type { SourceContext, SourceRef } from '../../core/workspace/source-link';
import { editorCompileActions } from './editor-compile';
import { documentOpener, editorDocumentActions } from './editor-documents';
import { draftKeeper, editorDraftActions } from './editor-drafts';
import { editorLocateActions } from './editor-locate';
import { editorSaveActions } from './editor-save';
import type { WorkbenchState } from './store';

export interface DocumentState {
  id: string;
  path: string | null;
  name: string;
  savedText: string | null;
  savedMtimeMs: number | null;
  dirty: boolean;
  order: number;
  /**
   * A file opened from a diagnostic bundle: shown read-only, never compiled here (its panels show the bundle's
   * own compile), never kept as a draft. `bundle` is the bundle's path.
   */
  readOnly?: { bundle: string };
}

export interface CompileState {
  status: 'compiling' | 'done' | 'stopped';
  result: CompileResult | null;
  /** The last compile of this document that succeeded: what the panels keep showing, marked stale, while the text does not compile. */
  lastGood: CompileResult | null;
  message: string | null;
  generation: number;
}

/** A line to show in a document: the editor moves there and focuses once that document is on screen. */
export interface RevealRequest {
  docId: string;
  line: number;
  column: number;
  seq: number;
}

/**
 * A file the workbench cannot find by itself, so the person is asked where it is: the file a source link
 * names, or the file of a recorded launch's kernel (to load that launch into its panel).
 */
export type LocateRequest =
  | { kind: 'line'; ref: SourceRef; tried: string[]; onFound?: (docId: string) => void; remember: boolean }
  | { kind: 'launch'; entry: string; launch: LaunchForm; deviceName: string | null };

export type EditorOptions = Omit<CompileOptionsInput, 'arch'> & { arch: string | null };

export interface EditorSlice {
  documents: DocumentState[];
  activeId: string | null;
  compiles: Record<string, CompileState>;
  compileOptions: EditorOptions;
  /** A note above the editor; one about a document (`docId`) shows only while that document is in front. */
  notice: { kind: 'error' | 'info'; text: string; docId?: string } | null;
  reveal: RevealRequest | null;
  locate: LocateRequest | null;
  /**
   * The person's answers to "Where is …?", by the file as the link names it: the path they gave (or the open
   * file they chose). Asked once, kept for the session: the next link to that file goes there without asking.
   */
  located: Record<string, { path: string | null; docId: string }>;
  restoreDocuments(): Promise<void>;
  /** Keeps the document (its text and its plan) as a draft on the host, soon: after an edit, or a change to its plan. */
  keepDraft(id: string): void;
  /** Opens a file (or shows it, when it is open): its document's id, or null with a notice saying why not. */
  openPath(path: string): Promise<string | null>;
  /** Shows a line of an open document: its tab, the line marked in the gutter and highlighted, the cursor there. */
  revealInDocument(docId: string, line: number, column?: number): void;
  /**
   * Opens the file a result, diagnostic or finding names and shows its line; asks where it is when it cannot
   * be found. `onFound` hears which document it turned out to be (found, or pointed out in the dialog).
   */
  revealSource(ref: SourceRef, context: SourceContext, onFound?: (docId: string) => void): Promise<void>;
  /** Asks which file defines a recorded launch's kernel, to load the launch into that file's panel. */
  locateLaunch(entry: string, launch: LaunchForm, deviceName: string | null): void;
  /** The answer to a locate request: the file's path, or an open document. */
  locateAt(path: string): Promise<boolean>;
  locateDocument(docId: string): void;
  cancelLocate(): void;
  newDocument(name: string, text: string): void;
  /** Opens a bundle's source read-only, with the bundle's own compile for its panels and markers: its document's id. */
  openReadOnly(name: string, text: string, bundle: string, compile: CompileResult | null): string;
  activate(id: string): void;
  close(id: string): Promise<void>;
  edited(id: string): void;
  save(id: string, path?: string): Promise<boolean>;
  compileNow(id: string): Promise<void>;
  cancelCompile(): Promise<void>;
  setCompileOptions(options: Partial<EditorOptions>): void;
  /** The SASS of a compile the host's cache holds (by its key); null when no disassembler was found. Rejects with the host's words. */
  disassemble(key: string): Promise<string | null>;
  dismissNotice(): void;
}

/**
 * The editor: its documents and their compiles, drafts, source links. Its actions come in groups, each in its own
 * module; the groups share the draft keeper and the way a file becomes a document.
 */
export const createEditorSlice: StateCreator<WorkbenchState, [], [], EditorSlice> = (set, get) => {
  const persistDraft = draftKeeper(set, get);
  const opener = documentOpener(set, get, persistDraft);
  return {
    documents: [],
    activeId: null,
    compiles: {},
    compileOptions: { arch: null, debug: false, maxRegisters: null, defines: [], fastMath: false, std: 'c++17' },
    notice: null,
    reveal: null,
    locate: null,
    located: {},
    ...editorDraftActions(set, get, persistDraft),
    ...editorDocumentActions(set, get, opener),
    ...editorSaveActions(set, get, persistDraft),
    ...editorLocateActions(set, get, opener),
    ...editorCompileActions(set, get, persistDraft),
    disassemble: async (key) => (await get().api.invoke('compile.sass', { key })).sass,
    dismissNotice: () => set({ notice: null }),
  };
};
