import { useEffect, useRef, useState } from 'react';

import type { EditorOptions } from '../store/editor-slice';

/**
 * The compile flags of the editor's toolbar: -G, fast math, maxrregcount, -D, -I and the C++ standard. On a wide
 * window they sit in the toolbar's row; on a narrow one (the toolbar's container query, styles.css) they fold behind
 * one button and open below it, so the toolbar stays one row. Escape closes them and gives the button the focus back.
 */
export function CompileFlags({ options, setCompileOptions }: { options: EditorOptions; setCompileOptions: (o: Partial<EditorOptions>) => void }) {
  const [flagsOpen, setFlagsOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  const group = useRef<HTMLDivElement>(null);
  // Unfolded, they fold again when the pointer or the focus goes elsewhere, or on Escape (the focus back on the button).
  useEffect(() => {
    if (!flagsOpen) return;
    const inside = (t: EventTarget | null) => t instanceof Node && (!!group.current?.contains(t) || !!toggle.current?.contains(t));
    const away = (e: Event) => {
      if (!inside(e.target)) setFlagsOpen(false);
    };
    const escape = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      setFlagsOpen(false);
      toggle.current?.focus();
    };
    document.addEventListener('pointerdown', away);
    document.addEventListener('focusin', away);
    document.addEventListener('keydown', escape);
    return () => {
      document.removeEventListener('pointerdown', away);
      document.removeEventListener('focusin', away);
      document.removeEventListener('keydown', escape);
    };
  }, [flagsOpen]);
  // How many flags differ from the defaults: said on the folded flags' button.
  const flagsSet = [
    options.debug,
    options.fastMath,
    options.maxRegisters,
    options.defines?.length,
    options.includePaths?.length,
    options.std && options.std !== 'c++17',
  ].filter(Boolean).length;
  return (
    <>
      {/* On a narrow window the flags fold behind this button (one row of toolbar); on a wide one they sit in the row. */}
      <button
        className="flags-toggle"
        ref={toggle}
        aria-expanded={flagsOpen}
        aria-controls="compile-flags"
        onClick={() => setFlagsOpen((o) => !o)}
        title="-G, fast math, maxrregcount, -D, -I and the C++ standard"
        data-testid="compile-flags-toggle"
      >
        Compile flags{flagsSet ? ` (${flagsSet})` : ''} <span aria-hidden="true">▾</span>
      </button>
      <div id="compile-flags" className={`compile-flags${flagsOpen ? ' open' : ''}`} role="group" aria-label="Compile flags" ref={group}>
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
      </div>
    </>
  );
}
