import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { ROOT } from '../helpers/cli';
import { TEST_RUNNER_ENTRY } from '../helpers/test-runner';

// What ships (dist/main, dist/electron, as scripts/bundle.mjs writes them) holds none of the tests' hooks: the
// runner's `block` request and the supervisor's unchecked sends live in the test build and test/helpers only.
const MARKERS = ['blockedMs', 'answerTestRequest', 'testRunnerRequestSchema', 'requestUnchecked', 'sendRaw', 'WORKBENCH_TEST_HOOKS'];

const shipped = ['dist/main', 'dist/electron'].flatMap((dir) =>
  readdirSync(join(ROOT, dir))
    .filter((f) => f.endsWith('.js'))
    .map((f) => join(ROOT, dir, f)),
);

test('no shipped bundle holds a test hook', () => {
  assert.ok(shipped.some((f) => f.endsWith('runner.impl.js')) && shipped.some((f) => f.endsWith('serve.impl.js')), shipped.join('\n'));
  for (const file of shipped) {
    const text = readFileSync(file, 'utf8');
    for (const marker of MARKERS) assert.ok(!text.includes(marker), `${file} holds ${marker}`);
  }
});

test('the test build of the runner does hold its hook (the check above looks for something real)', () => {
  const text = readFileSync(TEST_RUNNER_ENTRY, 'utf8');
  assert.ok(text.includes('blockedMs') && text.includes('answerTestRequest'));
});
