import { useSyncExternalStore } from 'react';

import { parseThemePreference, resolveTheme, type Theme, type ThemePreference } from '../../core/ui/theme';
import { monaco } from '../editor/monaco-setup';
import { preferences } from './storage';

const KEY = 'gpu-workbench.theme';
const system = matchMedia('(prefers-color-scheme: dark)');
const listeners = new Set<() => void>();
let preference = parseThemePreference(preferences.getItem(KEY));
let snapshot = { preference, theme: resolveTheme(preference, system.matches) };

export const monacoTheme = (theme: Theme) => (theme === 'dark' ? 'workbench-dark' : 'workbench-light');
export const currentMonacoTheme = () => monacoTheme(snapshot.theme);

/** Sets the page's colours (styles.css keys on data-theme) and Monaco's, which has one theme for the page. */
function apply() {
  snapshot = { preference, theme: resolveTheme(preference, system.matches) };
  document.documentElement.dataset['theme'] = snapshot.theme;
  monaco.editor.setTheme(monacoTheme(snapshot.theme));
  for (const l of listeners) l();
}

export function setThemePreference(next: ThemePreference): void {
  preference = next;
  preferences.setItem(KEY, next);
  apply();
}

system.addEventListener('change', apply);
apply();

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};

export function useTheme(): { preference: ThemePreference; theme: Theme } {
  return useSyncExternalStore(subscribe, () => snapshot);
}
