import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseThemePreference, resolveTheme } from '../../core/ui/theme';

test('a theme preference follows the system unless one was chosen; unknown stored values mean the system', () => {
  assert.equal(resolveTheme('system', true), 'dark');
  assert.equal(resolveTheme('system', false), 'light');
  assert.equal(resolveTheme('light', true), 'light');
  assert.equal(resolveTheme('dark', false), 'dark');
  assert.equal(parseThemePreference('dark'), 'dark');
  assert.equal(parseThemePreference(null), 'system');
  assert.equal(parseThemePreference('solarized'), 'system');
});
