/**
 * The app's keyboard shortcuts, declared once: the keyboard handler matches them and the Keyboard
 * shortcuts dialog lists them, so the list cannot drift from what the keys do.
 */
export type ShortcutId =
  | 'run'
  | 'save'
  | 'open'
  | 'nextProblem'
  | 'previousProblem'
  | 'nextRegion'
  | 'previousRegion'
  | 'focusProblems'
  | 'toggleTabFocus'
  | 'toggleOutput'
  | 'toggleSidePanel'
  | 'showShortcuts';

export type Platform = 'mac' | 'other';

/** `mod` is Cmd on a Mac and Ctrl elsewhere; `ctrl` is the Control key on every platform. */
export interface KeyChord {
  key: string;
  mod?: boolean;
  ctrl?: boolean;
  shift?: boolean;
  alt?: boolean;
}

export interface Shortcut {
  id: ShortcutId;
  chord: KeyChord;
  /** Where the Mac differs (as VS Code's Ctrl+Shift+M for the Tab key's mode). */
  mac?: KeyChord;
  does: string;
  group: 'Run and files' | 'Problems' | 'Focus' | 'Layout';
}

export const SHORTCUTS: readonly Shortcut[] = [
  { id: 'run', chord: { key: 'Enter', mod: true }, does: 'Run the kernel (the Run section’s form or loaded plan)', group: 'Run and files' },
  { id: 'save', chord: { key: 's', mod: true }, does: 'Save the file (a new file asks where)', group: 'Run and files' },
  { id: 'open', chord: { key: 'o', mod: true }, does: 'Open a file or a sample', group: 'Run and files' },
  { id: 'nextProblem', chord: { key: 'F8' }, does: 'Go to the next problem in the file', group: 'Problems' },
  { id: 'previousProblem', chord: { key: 'F8', shift: true }, does: 'Go to the previous problem in the file', group: 'Problems' },
  { id: 'focusProblems', chord: { key: 'm', mod: true, shift: true }, does: 'Show the Problems list and focus it', group: 'Problems' },
  { id: 'nextRegion', chord: { key: 'F6' }, does: 'Move focus to the next area: editor, output, side panel, top bar', group: 'Focus' },
  { id: 'previousRegion', chord: { key: 'F6', shift: true }, does: 'Move focus to the previous area', group: 'Focus' },
  {
    id: 'toggleTabFocus',
    chord: { key: 'm', ctrl: true },
    mac: { key: 'm', ctrl: true, shift: true },
    does: 'Tab key: switch between moving focus and inserting a tab in the editor',
    group: 'Focus',
  },
  { id: 'toggleOutput', chord: { key: 'j', mod: true }, does: 'Show or hide the output panel (problems, run results, log)', group: 'Layout' },
  { id: 'toggleSidePanel', chord: { key: 'b', mod: true }, does: 'Show or hide the side panel (kernels, launch, run)', group: 'Layout' },
  { id: 'showShortcuts', chord: { key: '/', mod: true, shift: true }, does: 'Show this list of keyboard shortcuts', group: 'Layout' },
];

/** What the handler needs of a KeyboardEvent (so this stays free of the DOM). */
export interface KeyEventLike {
  key: string;
  code?: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
}

export const chordFor = (s: Shortcut, platform: Platform): KeyChord => (platform === 'mac' && s.mac ? s.mac : s.chord);

/** Shift changes the key a layout reports ("/" becomes "?"), so punctuation is also matched by its physical key. */
const CODES: Record<string, string> = { '/': 'Slash' };

function matches(chord: KeyChord, e: KeyEventLike, platform: Platform): boolean {
  const wantCtrl = !!chord.ctrl || (!!chord.mod && platform === 'other');
  const wantMeta = !!chord.mod && platform === 'mac';
  if (e.ctrlKey !== wantCtrl || e.metaKey !== wantMeta || e.shiftKey !== !!chord.shift || e.altKey !== !!chord.alt) return false;
  if (e.key.toLowerCase() === chord.key.toLowerCase()) return true;
  const code = CODES[chord.key];
  return code !== undefined && e.code === code;
}

export function matchShortcut(e: KeyEventLike, platform: Platform): ShortcutId | null {
  return SHORTCUTS.find((s) => matches(chordFor(s, platform), e, platform))?.id ?? null;
}

const KEY_NAMES: Record<string, string> = { Enter: 'Enter', '/': '/' };

/** "Ctrl+Shift+M" elsewhere, "⌃⇧M" / "⌘Enter" on a Mac, as each platform writes them. */
export function formatChord(chord: KeyChord, platform: Platform): string {
  const key = KEY_NAMES[chord.key] ?? (chord.key.length === 1 ? chord.key.toUpperCase() : chord.key);
  if (platform === 'mac') {
    return `${chord.ctrl ? '⌃' : ''}${chord.alt ? '⌥' : ''}${chord.shift ? '⇧' : ''}${chord.mod ? '⌘' : ''}${key}`;
  }
  return [chord.ctrl || chord.mod ? 'Ctrl' : '', chord.alt ? 'Alt' : '', chord.shift ? 'Shift' : '', key].filter(Boolean).join('+');
}

export const shortcutKeys = (id: ShortcutId, platform: Platform): string => {
  const s = SHORTCUTS.find((x) => x.id === id)!;
  return formatChord(chordFor(s, platform), platform);
};
