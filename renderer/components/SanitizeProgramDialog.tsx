import { useState } from 'react';
import { useStore } from 'zustand';

import { SANITIZER_TOOLS, type SanitizerTool } from '../../core/sanitizer/findings';
import { parseEnvironmentLines, splitCommandLine } from '../../core/text/split-command';
import { resolveShownPath } from '../../core/workspace/paths';
import type { WorkbenchStore } from '../store/store';
import { Modal } from './Modal';
import { Prose } from './Prose';

/**
 * Sanitize a program: any command (a PyTorch, CuPy or ctypes script, a binary) under compute-sanitizer, as
 * `gpu-workbench sanitize -- <command>` runs it. The line is split into words as a shell would split it, but no
 * shell sees it: nothing is expanded. A host started without permission to run programs says so here.
 */
export function SanitizeProgramDialog({ store, onClose }: { store: WorkbenchStore; onClose: () => void }) {
  const info = useStore(store, (s) => s.info);
  const startDir = info?.startDir ?? '/';
  const allowed = info?.runsPrograms ?? false;
  // A run that started while this dialog was open (a failure re-run at once): this one would be refused, so say so here.
  const running = useStore(store, (s) => s.sanitizeProgress);
  const [line, setLine] = useState('');
  const [folder, setFolder] = useState(startDir);
  const [envText, setEnvText] = useState('');
  const [tool, setTool] = useState<SanitizerTool>('memcheck');
  const [error, setError] = useState<string | null>(null);
  const cwd = resolveShownPath(startDir, folder);
  return (
    <Modal label="Sanitize a program" onClose={onClose} testId="sanitize-program-dialog">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const words = splitCommandLine(line);
          if (!words.ok) return setError(words.error);
          const env = parseEnvironmentLines(envText);
          if (!env.ok) return setError(env.error);
          if (!cwd) return setError('Give the folder to run the program in.');
          setError(null);
          onClose();
          void store.getState().sanitizeProgram({ tool, command: words.argv, cwd, env: env.env });
        }}
      >
        <h2>Sanitize a program</h2>
        {!allowed && (
          <p role="note" data-testid="programs-off">
            <strong>Programs are off on this host.</strong>{' '}
            <Prose text="This workbench does not run programs named from the browser: it was started without `--allow-programs`. Start it with `gpu-workbench serve --allow-programs`, or run `gpu-workbench sanitize -- <command>` in a terminal on the GPU machine." />
          </p>
        )}
        <p className="muted">
          Runs the program under compute-sanitizer, following every process it starts, and shows what it found one row per place. Its own output is kept.
          Allocators that pool memory (PyTorch, CuPy) hide overruns inside their pool: set <span className="mono">PYTORCH_NO_CUDA_MEMORY_CACHING=1</span>, or
          turn CuPy&apos;s pool off in the script.
        </p>
        <label className="field">
          Command line{' '}
          <input autoFocus value={line} onChange={(e) => setLine(e.target.value)} placeholder="python3 train.py --epochs 1" aria-label="Command line" />
        </label>
        <label className="field">
          Working folder <input value={folder} onChange={(e) => setFolder(e.target.value)} aria-label="Working folder" />
        </label>
        {cwd && folder.trim() !== cwd && <p className="muted shown-path">{cwd}</p>}
        <label className="field">
          Environment (NAME=value, one a line){' '}
          <textarea
            value={envText}
            onChange={(e) => setEnvText(e.target.value)}
            rows={3}
            aria-label="Environment"
            placeholder="PYTORCH_NO_CUDA_MEMORY_CACHING=1"
          />
        </label>
        <label className="field">
          Tool{' '}
          <select value={tool} onChange={(e) => setTool(e.target.value as SanitizerTool)} aria-label="Tool">
            {SANITIZER_TOOLS.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        {running && (
          <p role="status" className="status-warn" data-testid="sanitize-program-busy">
            compute-sanitizer is running {running.tool} on <span className="mono">{running.label}</span>: one run under the tool at a time. Wait for it to
            finish, or cancel it in the Sanitizer tab, then run this one.
          </p>
        )}
        <button
          type="submit"
          disabled={!allowed || !line.trim() || !!running}
          title={!allowed ? 'This host does not run programs: see above' : running ? `${running.tool} is running ${running.label}: see above` : undefined}
        >
          Run under {tool}
        </button>{' '}
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        {error && (
          <p className="status-fail" role="alert" data-testid="sanitize-program-error">
            <Prose text={error} />
          </p>
        )}
      </form>
    </Modal>
  );
}
