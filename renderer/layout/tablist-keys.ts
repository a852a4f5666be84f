import type { KeyboardEvent } from 'react';

/**
 * Arrow keys, Home and End within a role="tablist", as the ARIA tabs pattern has them: focus moves to
 * the neighbouring tab and selects it. Put on the tablist as its onKeyDown.
 */
export function onTablistKeyDown(e: KeyboardEvent<HTMLElement>): void {
  const tabs = [...e.currentTarget.querySelectorAll<HTMLElement>('[role="tab"]')];
  const at = tabs.indexOf(e.target as HTMLElement);
  if (at === -1) return;
  const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tabs.length - 1 }[e.key];
  if (to === undefined) return;
  e.preventDefault();
  const tab = tabs[(to + tabs.length) % tabs.length]!;
  tab.focus();
  tab.click();
}

/** tabIndex for a tab in a roving tablist: only the selected one is in the Tab order. */
export const rovingTabIndex = (selected: boolean) => (selected ? 0 : -1);
