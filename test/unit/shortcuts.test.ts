import assert from 'node:assert/strict';
import { test } from 'node:test';

import { SHORTCUTS, chordFor, formatChord, matchShortcut, shortcutKeys, type KeyEventLike } from '../../core/ui/shortcuts';

const key = (k: string, mods: Partial<KeyEventLike> = {}): KeyEventLike => ({
  key: k,
  ctrlKey: false,
  metaKey: false,
  shiftKey: false,
  altKey: false,
  ...mods,
});

test('Ctrl is the modifier on Linux and Windows, Cmd on a Mac', () => {
  assert.equal(matchShortcut(key('Enter', { ctrlKey: true }), 'other'), 'run');
  assert.equal(matchShortcut(key('Enter', { metaKey: true }), 'mac'), 'run');
  assert.equal(matchShortcut(key('Enter', { metaKey: true }), 'other'), null);
  assert.equal(matchShortcut(key('Enter', { ctrlKey: true }), 'mac'), null);
  assert.equal(matchShortcut(key('S', { ctrlKey: true }), 'other'), 'save', 'a letter matches in either case (Caps Lock)');
});

test('extra modifiers do not match: Ctrl+Shift+Enter is not run, Enter alone is nothing', () => {
  assert.equal(matchShortcut(key('Enter', { ctrlKey: true, shiftKey: true }), 'other'), null);
  assert.equal(matchShortcut(key('Enter'), 'other'), null);
  assert.equal(matchShortcut(key('a'), 'other'), null);
});

test('F8 and Shift+F8 walk problems; F6 and Shift+F6 walk focus areas', () => {
  assert.equal(matchShortcut(key('F8'), 'other'), 'nextProblem');
  assert.equal(matchShortcut(key('F8', { shiftKey: true }), 'other'), 'previousProblem');
  assert.equal(matchShortcut(key('F6'), 'mac'), 'nextRegion');
  assert.equal(matchShortcut(key('F6', { shiftKey: true }), 'mac'), 'previousRegion');
});

test('the Tab key mode is Ctrl+M as in VS Code, Ctrl+Shift+M on a Mac; the Problems list is Mod+Shift+M', () => {
  assert.equal(matchShortcut(key('m', { ctrlKey: true }), 'other'), 'toggleTabFocus');
  assert.equal(matchShortcut(key('M', { ctrlKey: true, shiftKey: true }), 'other'), 'focusProblems');
  assert.equal(matchShortcut(key('M', { ctrlKey: true, shiftKey: true }), 'mac'), 'toggleTabFocus');
  assert.equal(matchShortcut(key('M', { metaKey: true, shiftKey: true }), 'mac'), 'focusProblems');
});

test('the shortcuts list opens with Ctrl+Shift+/ whatever character Shift+/ types on this layout', () => {
  assert.equal(matchShortcut({ ...key('?', { ctrlKey: true, shiftKey: true }), code: 'Slash' }, 'other'), 'showShortcuts');
  assert.equal(matchShortcut({ ...key('_', { ctrlKey: true, shiftKey: true }), code: 'Slash' }, 'other'), 'showShortcuts');
});

test('no two shortcuts share a chord on either platform', () => {
  for (const platform of ['mac', 'other'] as const) {
    const chords = SHORTCUTS.map((s) => formatChord(chordFor(s, platform), platform));
    assert.equal(new Set(chords).size, chords.length, chords.join(', '));
  }
});

test('chords are written as each platform writes them', () => {
  assert.equal(shortcutKeys('run', 'other'), 'Ctrl+Enter');
  assert.equal(shortcutKeys('run', 'mac'), '⌘Enter');
  assert.equal(shortcutKeys('previousProblem', 'other'), 'Shift+F8');
  assert.equal(shortcutKeys('toggleTabFocus', 'other'), 'Ctrl+M');
  assert.equal(shortcutKeys('toggleTabFocus', 'mac'), '⌃⇧M');
  assert.equal(shortcutKeys('showShortcuts', 'other'), 'Ctrl+Shift+/');
});
