import type { ReactNode } from 'react';

import { THEME_PREFERENCES, type ThemePreference } from '../../core/ui/theme';
import { shortcutKeys } from '../../core/ui/shortcuts';
import { platform } from '../layout/keyboard';
import { onTablistKeyDown, rovingTabIndex } from '../layout/tablist-keys';
import { setThemePreference, useTheme } from '../layout/theme';
import './app-header.css';

export type View = 'editor' | 'devices' | 'gallery' | 'explain' | 'diagnose' | 'bundle';

const VIEWS: { id: View; label: string; testId?: string }[] = [
  { id: 'editor', label: 'Editor' },
  { id: 'devices', label: 'Devices', testId: 'devices-tab' },
  { id: 'gallery', label: 'Failure gallery', testId: 'gallery-tab' },
  { id: 'explain', label: 'Explain an error' },
  { id: 'diagnose', label: 'Diagnose', testId: 'diagnose-tab' },
  { id: 'bundle', label: 'Bundle', testId: 'bundle-tab' },
];

const THEME_LABEL: Record<ThemePreference, string> = { system: 'System', light: 'Light', dark: 'Dark' };

/** The top bar: the views, what this host is, the theme, and the way to the shortcuts list. */
export function AppHeader({
  view,
  onView,
  devicesWarning,
  info,
  extra,
  onShortcuts,
  bundleOpen = false,
}: {
  view: View;
  onView: (view: View) => void;
  devicesWarning: boolean;
  info: { version: string; rest: string };
  extra: ReactNode;
  onShortcuts: () => void;
  /** The Bundle view is there while a bundle is open. */
  bundleOpen?: boolean;
}) {
  const { preference, theme } = useTheme();
  return (
    <header data-region="top bar" aria-label="Top bar">
      <h1>GPU Workbench</h1>
      <nav role="tablist" aria-label="Views" onKeyDown={onTablistKeyDown}>
        {VIEWS.filter((v) => v.id !== 'bundle' || bundleOpen).map((v) => (
          <button
            key={v.id}
            role="tab"
            aria-selected={view === v.id}
            tabIndex={rovingTabIndex(view === v.id)}
            onClick={() => onView(v.id)}
            data-testid={v.testId}
          >
            {v.label}
            {v.id === 'devices' && devicesWarning ? (
              <span role="img" aria-label="(no usable device)">
                {' '}
                ⚠
              </span>
            ) : null}
          </button>
        ))}
      </nav>
      {extra}
      {/* On a narrow window the version stays whole and the rest gives way (all of it in the tooltip). */}
      <span className="meta" data-testid="app-info" title={info.version + info.rest} style={{ minWidth: `${info.version.length + 1}ch` }}>
        <span className="meta-version">{info.version}</span>
        <span className="meta-rest">{info.rest}</span>
      </span>
      <label className="theme-choice">
        <span className="theme-word">Theme </span>
        <select value={preference} onChange={(e) => setThemePreference(e.target.value as ThemePreference)} aria-label="Theme" data-testid="theme-select">
          {THEME_PREFERENCES.map((p) => (
            <option key={p} value={p}>
              {p === 'system' && preference === 'system' ? `System (${theme})` : THEME_LABEL[p]}
            </option>
          ))}
        </select>
      </label>
      <button
        onClick={onShortcuts}
        aria-label="Keyboard shortcuts"
        title={`Keyboard shortcuts (${shortcutKeys('showShortcuts', platform)})`}
        data-testid="shortcuts-button"
      >
        Shortcuts
      </button>
    </header>
  );
}
