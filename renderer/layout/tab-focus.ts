import { useSyncExternalStore } from 'react';
import { TabFocus } from 'monaco-editor/editor/browser/config/tabFocus';

import { preferences } from './storage';

/**
 * Whether Tab in the editor moves focus (the default, so the keyboard never gets stuck in the editor)
 * or inserts a tab. Monaco keeps this as one switch for the page; it is remembered across visits.
 */
const KEY = 'gpu-workbench.tabMovesFocus';
TabFocus.setTabFocusMode(preferences.getItem(KEY) !== 'false');
TabFocus.onDidChangeTabFocus((on) => preferences.setItem(KEY, String(on)));

export const toggleTabMovesFocus = () => TabFocus.setTabFocusMode(!TabFocus.getTabFocusMode());

const subscribe = (l: () => void) => {
  const d = TabFocus.onDidChangeTabFocus(l);
  return () => {
    d.dispose();
  };
};

export const useTabMovesFocus = () => useSyncExternalStore(subscribe, () => TabFocus.getTabFocusMode());
