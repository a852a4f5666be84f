// Bundles every entry point with esbuild so that dist/ runs with Node alone (the GPU machine has no
// npm registry), then copies the renderer's static files. Type checking is `npm run typecheck`.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const r = (p) => join(root, p);
const node = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: 'linked',
  logLevel: 'warning',
  external: ['electron', 'bufferutil', 'utf-8-validate', 'playwright-core'],
  // Test hooks (main/build-flags.d.ts) are compiled out of everything but the test runner below.
  define: { WORKBENCH_TEST_HOOKS: 'false' },
  // The diagnosis's Python shim and probe travel inside the bundle, written out where a program's Python reads them.
  loader: { '.py': 'text' },
};

rmSync(r('dist'), { recursive: true, force: true });

const testEntries = [];
for (const suite of ['unit', 'integration', 'e2e', 'gpu']) {
  let files = [];
  try {
    files = readdirSync(r(`test/${suite}`)).filter((f) => f.endsWith('.test.ts'));
  } catch {
    continue;
  }
  for (const f of files) testEntries.push({ in: r(`test/${suite}/${f}`), out: `test/${suite}/${f.replace(/\.ts$/, '')}` });
}

await Promise.all([
  // What ships. minifySyntax folds the test-hook branches away (WORKBENCH_TEST_HOOKS is false here), so no trace of
  // them is left; names and lines stay readable.
  build({
    ...node,
    minifySyntax: true,
    entryPoints: [
      { in: r('main/cli/cli-entry.ts'), out: 'main/cli.impl' },
      { in: r('main/cli/diagnose-entry.ts'), out: 'main/cli-diagnose.impl' },
      { in: r('main/serve/serve-entry.ts'), out: 'main/serve.impl' },
      { in: r('main/runner/runner-entry.ts'), out: 'main/runner.impl' },
      { in: r('main/compile/compile-worker-entry.ts'), out: 'main/compile-worker.impl' },
      { in: r('main/boot/code-cache.ts'), out: 'main/boot' },
      { in: r('main/readers/file-reader-child.ts'), out: 'main/file-reader.impl' },
      { in: r('main/electron/electron-main.ts'), out: 'electron/main' },
      { in: r('preload/preload.ts'), out: 'electron/preload' },
    ],
    outdir: r('dist'),
  }),
  build({
    ...node,
    entryPoints: [
      { in: r('bench/bench.ts'), out: 'bench/bench' },
      { in: r('bench/soak.ts'), out: 'bench/soak' },
      { in: r('bench/sanitizer-bench.ts'), out: 'bench/sanitizer-bench' },
      { in: r('bench/sanitize-overhead.ts'), out: 'bench/sanitize-overhead' },
      { in: r('bench/snapshot-bench.ts'), out: 'bench/snapshot-bench' },
      { in: r('bench/bundle-bench.ts'), out: 'bench/bundle-bench' },
      { in: r('bench/timeline-fps.ts'), out: 'bench/timeline-fps' },
      { in: r('bench/nvml-sampling.ts'), out: 'bench/nvml-sampling' },
      { in: r('bench/diagnose-bench.ts'), out: 'bench/diagnose-bench' },
      { in: r('bench/diagnose-steps.ts'), out: 'bench/diagnose-steps' },
      { in: r('bench/profile-bench.ts'), out: 'bench/profile-bench' },
      { in: r('bench/sanitize-plan.ts'), out: 'bench/sanitize-plan' },
      // The readers' mutation fuzz, one process per reader (test/integration/reader-fuzz.test.ts starts it).
      { in: r('test/fuzz/fuzz-child.ts'), out: 'test/fuzz/fuzz-child' },
      ...testEntries,
    ],
    outdir: r('dist'),
  }),
  // The runner with its test hooks (main/runner/runner-test-hooks.ts), for the lifecycle tests only: never shipped.
  build({
    ...node,
    define: { WORKBENCH_TEST_HOOKS: 'true' },
    entryPoints: [{ in: r('main/runner/runner-entry.ts'), out: 'test/helpers/test-runner' }],
    outdir: r('dist'),
  }),
  build({
    bundle: true,
    platform: 'browser',
    target: 'chrome120',
    format: 'esm',
    jsx: 'automatic',
    minify: true,
    sourcemap: 'linked',
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
    entryPoints: { app: r('renderer/main.tsx') },
    loader: { '.ttf': 'file' },
    outdir: r('dist/renderer'),
  }),
  // Monaco's editor worker, served beside app.js (no CDN: the app works offline).
  build({
    bundle: true,
    platform: 'browser',
    target: 'chrome120',
    format: 'esm',
    minify: true,
    logLevel: 'warning',
    entryPoints: { 'editor.worker': r('node_modules/monaco-editor/esm/vs/editor/editor.worker.js') },
    outdir: r('dist/renderer'),
  }),
]);

// The processes that start often (the CLI, serve, runners, compile workers, file readers) load their bundle through V8's code
// cache (main/boot/code-cache.ts): each entry is a stub that hands its bundle to the loader.
for (const name of ['serve', 'runner', 'compile-worker', 'file-reader']) {
  writeFileSync(
    r(`dist/main/${name}.js`),
    `'use strict';\n// Loads ${name}.impl.js with V8's code cache (main/boot/code-cache.ts).\nconst boot = require('./boot.js');\nboot.runWithCodeCache(require('node:path').join(__dirname, '${name}.impl.js'), module);\n`,
  );
}
// The CLI's code cache is kept per command; `diagnose` has a bundle of its own (main/cli/diagnose-entry.ts).
writeFileSync(
  r('dist/main/cli.js'),
  `'use strict';\n// Loads cli.impl.js, or cli-diagnose.impl.js for \`diagnose\`, with V8's code cache (main/boot/code-cache.ts).\nconst boot = require('./boot.js');\nconst command = boot.commandVariant(process.argv);\nboot.runWithCodeCache(require('node:path').join(__dirname, command === 'diagnose' ? 'cli-diagnose.impl.js' : 'cli.impl.js'), module, command);\n`,
);

mkdirSync(r('dist/renderer'), { recursive: true });
for (const f of ['index.html', 'styles.css']) copyFileSync(r(`renderer/${f}`), r(`dist/renderer/${f}`));
console.log('bundled into dist/');
