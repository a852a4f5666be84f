// Runs the bundled test suites (dist/test/<suite>/*.test.js) with Node's own test runner, so the
// same command works here and on the GPU machine, which has Node but no node_modules.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const suites = process.argv.slice(2);
if (suites.length === 0) {
  console.error('usage: node scripts/run-tests.mjs <unit|integration|e2e|gpu>...');
  process.exit(64);
}
const files = [];
for (const suite of suites) {
  const dir = join(root, 'dist/test', suite);
  if (!existsSync(dir)) {
    console.error(`No bundled tests in ${dir}: run \`node scripts/bundle.mjs\` first.`);
    process.exit(64);
  }
  files.push(
    ...readdirSync(dir)
      .filter((f) => f.endsWith('.test.js'))
      .sort()
      .map((f) => join(dir, f)),
  );
}
// GPU and e2e tests share one device or one browser: run files one at a time.
// NODE_ENV=test: every host the tests start checks each answer against its channel's declaration (main/host-api.ts).
// The stand-in tools' versions are remembered in a file of the run's own, not among the user's real toolkits.
const toolVersions = join(mkdtempSync(join(tmpdir(), 'wb-test-tool-versions-')), 'tool-versions.json');
const result = spawnSync(process.execPath, ['--enable-source-maps', '--test', '--test-concurrency=1', '--test-reporter=spec', ...files], {
  stdio: 'inherit',
  cwd: root,
  env: { ...process.env, NODE_ENV: 'test', GPU_WORKBENCH_TOOL_VERSIONS: toolVersions },
});
process.exit(result.status ?? 1);
