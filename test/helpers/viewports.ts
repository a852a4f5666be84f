import assert from 'node:assert/strict';

import type { Locator, Page } from 'playwright-core';

/** The two windows issue 12 was found at: a laptop's full screen and a small window. */
export const VIEWPORTS = [
  { width: 1440, height: 900 },
  { width: 1024, height: 700 },
] as const;

export const box = async (locator: Locator) => {
  const b = await locator.boundingBox();
  assert.ok(b, `${locator} is not on the page`);
  return b;
};

/** The element is on screen, whole: not cut off by the window's edges. */
export async function assertInsideWindow(page: Page, locator: Locator, what: string): Promise<void> {
  const b = await box(locator);
  const { width, height } = page.viewportSize()!;
  assert.ok(b.width > 0 && b.height > 0, `${what} has no size (${b.width}×${b.height})`);
  assert.ok(
    b.x >= 0 && b.y >= 0 && b.x + b.width <= width + 0.5 && b.y + b.height <= height + 0.5,
    `${what} is at ${JSON.stringify(b)}, outside the ${width}×${height} window`,
  );
}

/** Waits (up to 5 s) until the element's size passes `ok`, then returns it; a failure says the size it had. */
export async function waitForSize(page: Page, testId: string, ok: (b: { width: number; height: number }) => boolean, what: string) {
  let last = { width: NaN, height: NaN };
  for (const start = Date.now(); Date.now() - start < 5000; await page.waitForTimeout(50)) {
    const b = await page.getByTestId(testId).boundingBox();
    last = b ?? last;
    if (b && ok(b)) return b;
  }
  throw new assert.AssertionError({ message: `${what}: ${testId} stayed ${last.width}×${last.height}` });
}
