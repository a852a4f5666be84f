import { useEffect, useState } from 'react';

import type { CompileResult } from '../../core/compile/compile-result';
import { shortcutKeys } from '../../core/ui/shortcuts';
import { platform } from '../layout/keyboard';
import { toggleTabMovesFocus, useTabMovesFocus } from '../layout/tab-focus';
import { onCursorChange } from './EditorPane';
import { plural } from '../../core/format';

/** The editor's bottom line: where the cursor is, what Tab does, the problem count, and the panel switches. */
export function StatusBar({
  result,
  outputShown,
  sideShown,
  onProblems,
  onToggleOutput,
  onToggleSide,
}: {
  result: CompileResult | null;
  outputShown: boolean;
  sideShown: boolean;
  onProblems: () => void;
  onToggleOutput: () => void;
  onToggleSide: () => void;
}) {
  const tabMovesFocus = useTabMovesFocus();
  const [cursor, setCursor] = useState<{ line: number; column: number } | null>(null);
  useEffect(() => onCursorChange((line, column) => setCursor({ line, column })), []);
  const errors = result?.diagnostics.filter((d) => d.severity === 'error').length ?? 0;
  const warnings = result?.diagnostics.filter((d) => d.severity === 'warning').length ?? 0;
  return (
    <footer className="status-bar" data-testid="status-bar" aria-label="Status bar">
      <button onClick={onProblems} data-testid="problem-count" title={`Problems (${shortcutKeys('focusProblems', platform)})`}>
        <span className={errors ? 'status-fail' : undefined}>{plural(errors, 'error')}</span>,{' '}
        <span className={warnings ? 'status-warn' : undefined}>{plural(warnings, 'warning')}</span>
      </button>
      <span data-testid="cursor-position">{cursor ? `Ln ${cursor.line}, Col ${cursor.column}` : ''}</span>
      <button
        onClick={toggleTabMovesFocus}
        aria-pressed={tabMovesFocus}
        data-testid="tab-focus-mode"
        title={`What the Tab key does in the editor (${shortcutKeys('toggleTabFocus', platform)} switches)`}
      >
        Tab moves focus: {tabMovesFocus ? 'on' : 'off'}
        <kbd>{shortcutKeys('toggleTabFocus', platform)}</kbd>
      </button>
      <span className="spacer" />
      <button onClick={onToggleOutput} aria-pressed={outputShown} title={`Output panel (${shortcutKeys('toggleOutput', platform)})`}>
        Output panel
      </button>
      <button onClick={onToggleSide} aria-pressed={sideShown} title={`Side panel (${shortcutKeys('toggleSidePanel', platform)})`}>
        Side panel
      </button>
    </footer>
  );
}
