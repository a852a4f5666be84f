import { focusEditor } from '../components/EditorPane';

/**
 * F6 / Shift+F6: focus moves between the page's areas (elements marked data-region), in page order,
 * skipping those that are collapsed. Landing in an area focuses what a person would act on first there.
 */
const FOCUSABLE = 'button:not([disabled]), input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

const shown = (e: HTMLElement) => !e.closest('[inert]') && e.offsetWidth > 0 && e.offsetHeight > 0;

function focusInside(region: HTMLElement): void {
  if (region.dataset['region'] === 'editor' && focusEditor()) return;
  const selectedTab = region.querySelector<HTMLElement>('[role="tab"][aria-selected="true"]');
  const target = selectedTab && shown(selectedTab) ? selectedTab : [...region.querySelectorAll<HTMLElement>(FOCUSABLE)].find(shown);
  (target ?? region).focus();
}

export function focusNextRegion(step: 1 | -1): void {
  const regions = [...document.querySelectorAll<HTMLElement>('[data-region]')].filter(shown);
  if (regions.length === 0) return;
  const current = regions.findIndex((r) => r.contains(document.activeElement));
  const next = current === -1 ? (step === 1 ? 0 : regions.length - 1) : (current + step + regions.length) % regions.length;
  focusInside(regions[next]!);
}
