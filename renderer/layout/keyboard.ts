import { matchShortcut, type Platform } from '../../core/ui/shortcuts';
import { runCommand } from './commands';

export const platform: Platform = /Mac|iPhone|iPad/.test(navigator.platform) ? 'mac' : 'other';

/**
 * The app's shortcuts, caught before Monaco sees them (capture phase): Ctrl+Enter would otherwise insert
 * a line, F8 open Monaco's own peek. While a dialog is open, the keys belong to it.
 */
export function installShortcuts(): () => void {
  const onKey = (e: KeyboardEvent) => {
    if (e.defaultPrevented || e.isComposing || document.querySelector('dialog[open]')) return;
    const id = matchShortcut(e, platform);
    if (id && runCommand(id)) {
      e.preventDefault();
      e.stopPropagation();
    }
  };
  window.addEventListener('keydown', onKey, true);
  return () => window.removeEventListener('keydown', onKey, true);
}
