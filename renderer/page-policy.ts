import * as z from 'zod';

// First of the renderer's modules: what follows runs before Monaco's and zod's schemas are made.

// Without 'unsafe-eval' in the page's policy, zod's first object schema would try `new Function` to see whether it
// may compile its parsers, and the attempt is reported as a policy violation.
z.config({ jitless: true });

/**
 * Monaco makes <style> elements at run time (its theme's colours, icons, lists), and the page's policy admits a
 * <style> only with the nonce the host wrote into this page (main/serve/renderer-files.ts): each <style> made
 * here gets it before it is attached. The nonce is read from its element's property: Chromium hides the attribute.
 */
const nonce = document.querySelector<HTMLMetaElement>('meta[property="csp-nonce"]')?.nonce;
if (nonce) {
  const createElement = document.createElement.bind(document);
  document.createElement = ((tagName: string, options?: ElementCreationOptions) => {
    const element = createElement(tagName, options);
    if (element instanceof HTMLStyleElement) element.nonce = nonce;
    return element;
  }) as typeof document.createElement;
}
