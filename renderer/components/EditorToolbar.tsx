import { shortcutKeys } from '../../core/ui/shortcuts';
import { platform } from '../layout/keyboard';
import type { CompileState, DocumentState, EditorOptions } from '../store/editor-slice';
import type { WorkbenchStore } from '../store/store';
import { CompileFlags } from './CompileFlags';

const ARCHS = ['sm_70', 'sm_75', 'sm_80', 'sm_86', 'sm_89', 'sm_90', 'sm_100', 'sm_120'];

const NEW_FILE_TEXT = '__global__ void kernel(float* out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = i;\n}\n';

/** The compile status beside the options: a bundle's recorded compile, compiling, stopped, or the last result and its time. */
export function compileStatus(doc: DocumentState | undefined, compile: CompileState | undefined): string {
  const result = compile?.result ?? null;
  if (doc?.readOnly)
    return result
      ? `From the bundle (read-only): ${result.ok ? '✓' : '✗'} ${result.backend} · ${result.arch}, as recorded`
      : 'From the bundle (read-only): the run never compiled it';
  if (compile?.status === 'compiling') return 'Compiling…';
  if (compile?.status === 'stopped') return `Stopped: ${compile.message}`;
  return result
    ? `${result.ok ? '✓' : '✗'} ${result.backend} · ${result.arch} · ${result.ms.toFixed(result.cached ? 1 : 0)} ms${result.cached ? ' (cached)' : ''}`
    : '';
}

/** The editor's toolbar: Open…, New, Save, Save as…, the architecture and compile flags, the compile's status and its Cancel. */
export function EditorToolbar({
  store,
  doc,
  compile,
  options,
  onOpen,
  onSaveAs,
}: {
  store: WorkbenchStore;
  doc: DocumentState | undefined;
  compile: CompileState | undefined;
  options: EditorOptions;
  onOpen: () => void;
  onSaveAs: () => void;
}) {
  const { save, cancelCompile, setCompileOptions, newDocument } = store.getState();
  const status = compileStatus(doc, compile);
  return (
    <div className="toolbar" role="toolbar" aria-label="File and compile options">
      <button onClick={onOpen} title={`Open (${shortcutKeys('open', platform)})`} data-testid="open-file">
        Open…
      </button>
      <button onClick={() => newDocument('untitled.cu', NEW_FILE_TEXT)}>New</button>
      <button disabled={!doc} onClick={() => (doc?.path ? void save(doc.id) : onSaveAs())} title={`Save (${shortcutKeys('save', platform)})`}>
        Save
      </button>
      <button disabled={!doc} onClick={onSaveAs}>
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
  );
}
