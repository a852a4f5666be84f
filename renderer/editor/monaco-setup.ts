import './monaco-features';

import * as monaco from 'monaco-editor/editor/editor.api';

import { registerCuda } from './cuda-language';

/** Monaco, bundled locally (no CDN): one web worker for editing, served beside app.js. */
(self as unknown as { MonacoEnvironment: unknown }).MonacoEnvironment = {
  getWorker: () => new Worker(new URL('./editor.worker.js', location.href), { type: 'module' }),
};
registerCuda();
monaco.editor.defineTheme('workbench-dark', {
  base: 'vs-dark',
  inherit: true,
  rules: [{ token: 'predefined', foreground: '4EC9B0' }],
  colors: { 'editor.background': '#16181c' },
});

export { monaco };
