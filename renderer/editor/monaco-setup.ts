import './monaco-features';

import * as monaco from 'monaco-editor/editor/editor.api';

import { registerCuda } from './cuda-language';

/** Monaco, bundled locally (no CDN): one web worker for editing, served beside app.js. */
(self as unknown as { MonacoEnvironment: unknown }).MonacoEnvironment = {
  getWorker: () => new Worker(new URL('./editor.worker.js', location.href), { type: 'module' }),
};
registerCuda();
// One per app theme (renderer/layout/theme.ts picks): backgrounds match styles.css's --bg.
monaco.editor.defineTheme('workbench-dark', {
  base: 'vs-dark',
  inherit: true,
  rules: [
    { token: 'predefined', foreground: '4EC9B0' },
    { token: 'comment', foreground: '6A9955' }, // vs-dark's #608b4e is 4.48:1 on our background, under WCAG's 4.5
  ],
  colors: { 'editor.background': '#16181c' },
});
monaco.editor.defineTheme('workbench-light', {
  base: 'vs',
  inherit: true,
  rules: [{ token: 'predefined', foreground: '267F99' }],
  colors: { 'editor.background': '#ffffff' },
});

export { monaco };
