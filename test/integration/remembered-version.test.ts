import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { toolVersion } from '../../main/tools/find-tool';
import { rememberedToolVersion } from '../../main/tools/remembered-version';
import { ROOT } from '../helpers/cli';

const versionOf = (stdout: string) => /Version ([\d.]+)/.exec(stdout)?.[1] ?? null;

/** A tool that says its version and counts how often it was asked. */
function countingTool(dir: string, version: string): { tool: string; asked: () => number } {
  const tool = join(dir, 'compute-sanitizer');
  const log = join(dir, 'asked.log');
  writeFileSync(tool, `#!/bin/sh\necho asked >> '${log}'\necho 'Version ${version} (build 1) (public-release)'\n`);
  chmodSync(tool, 0o755);
  writeFileSync(log, '');
  return { tool, asked: () => readFileSync(log, 'utf8').split('\n').filter(Boolean).length };
}

test('a tool’s version is asked once and remembered for the next process; a changed tool is asked again', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wb-tool-version-'));
  const cache = join(dir, 'cache', 'tool-versions.json');
  const { tool, asked } = countingTool(dir, '2025.3.1.0');
  const ask = () => toolVersion(tool, versionOf);
  assert.equal(await rememberedToolVersion(tool, ask, cache), '2025.3.1.0');
  assert.equal(await rememberedToolVersion(tool, ask, cache), '2025.3.1.0');
  assert.equal(asked(), 1, 'the second answer came from the file');
  assert.equal(statSync(cache).mode & 0o777, 0o600);
  assert.equal(statSync(join(dir, 'cache')).mode & 0o777, 0o700);

  // A new toolkit in the same place: another file, so another key.
  writeFileSync(tool, `#!/bin/sh\necho asked >> '${join(dir, 'asked.log')}'\necho 'Version 2026.1.0.0 (build 2) (public-release)'\n`);
  utimesSync(tool, new Date(), new Date(Date.now() + 5_000));
  assert.equal(await rememberedToolVersion(tool, ask, cache), '2026.1.0.0');
  assert.equal(asked(), 2);
  // An upgrade as a package manager makes it: a new file renamed over the old, its size and time the same.
  const { mtime, size } = statSync(tool);
  const next = join(dir, 'next');
  writeFileSync(next, readFileSync(tool, 'utf8').replace('2026.1.0.0', '2026.2.0.0'));
  chmodSync(next, 0o755);
  utimesSync(next, mtime, mtime);
  assert.equal(statSync(next).size, size);
  renameSync(next, tool);
  assert.equal(await rememberedToolVersion(tool, ask, cache), '2026.2.0.0');
  assert.equal(asked(), 3);
});

test('the versions file is data: a FIFO, a huge file, another shape or a value that is not a version is passed over, never trusted', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wb-tool-version-'));
  const { tool, asked } = countingTool(dir, '2025.3.1.0');
  const ask = () => toolVersion(tool, versionOf);
  const key = (() => {
    const s = statSync(tool);
    return `${tool}\0${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}`;
  })();
  const cases: [string, (file: string) => void][] = [
    ['a FIFO', (file) => execFileSync('mkfifo', [file])],
    ['a file over 64 KiB', (file) => writeFileSync(file, JSON.stringify({ [key]: '9.9', pad: 'x'.repeat(70_000) }))],
    ['a list', (file) => writeFileSync(file, JSON.stringify([key, '9.9']))],
    ['not JSON', (file) => writeFileSync(file, '{"')],
    ['a value that is not a version', (file) => writeFileSync(file, JSON.stringify({ [key]: '9.9; rm -rf ~' }))],
  ];
  for (const [i, [what, make]] of cases.entries()) {
    const file = join(dir, `versions-${i}.json`);
    make(file);
    const started = performance.now();
    assert.equal(await rememberedToolVersion(tool, ask, file), '2025.3.1.0', what);
    assert.ok(performance.now() - started < 5_000, `${what}: not waited on`);
  }
  assert.equal(asked(), cases.length, 'each was asked of the tool');
  // The well-formed file that took the place of the bad ones answers the next time without asking.
  assert.equal(await rememberedToolVersion(tool, ask, join(dir, 'versions-4.json')), '2025.3.1.0');
  assert.equal(asked(), cases.length);
});

test('two CLI processes under the same cache ask compute-sanitizer’s version once between them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wb-tool-version-cli-'));
  const { tool, asked } = countingTool(dir, '2025.3.1.0');
  // The program under the stand-in is never run: it answers --version, and exits 1 for the run itself.
  writeFileSync(
    tool,
    `#!/bin/sh\nif [ "$1" = --version ]; then echo asked >> '${join(dir, 'asked.log')}'; echo 'Version 2025.3.1.0 (build 1)'; exit 0; fi\nexit 1\n`,
  );
  const env = { ...process.env, GPU_WORKBENCH_TOOL_VERSIONS: join(dir, 'versions.json'), GPU_WORKBENCH_COMPUTE_SANITIZER: tool };
  for (let i = 0; i < 2; i++) {
    const r = spawnSync(process.execPath, [join(ROOT, 'bin/gpu-workbench.js'), 'sanitize', '--json', '--', 'true'], {
      cwd: dir,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.notEqual(r.status, null, r.stderr);
    assert.match(r.stdout, /"version": "2025\.3\.1\.0"/, r.stderr);
  }
  assert.equal(asked(), 1);
});
