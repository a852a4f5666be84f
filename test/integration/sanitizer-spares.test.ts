import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { DEFAULT_SANITIZER_OPTIONS } from '../../core/sanitizer/sanitizer-args';
import { listProcesses, processRuns } from '../../main/process/process-state';
import { SanitizedRunner, SanitizerSpares, type SanitizedRunnerSpec } from '../../main/services/sanitized-runner';

// No compute-sanitizer here: a stand-in that drops the tool's options and runs its target, as the tool does. The
// runners under it are the real ones (their context fails to open without a driver; they live on, answering).
const dir = mkdtempSync(join(tmpdir(), 'gpu-workbench-spares-test-'));
const tool = join(dir, 'compute-sanitizer');
writeFileSync(
  tool,
  '#!/bin/sh\necho "========= COMPUTE-SANITIZER (stand-in)"\nwhile [ "$#" -gt 0 ] && [ "$1" != "$SPARES_TEST_NODE" ]; do shift; done\nexec "$@"\n',
);
chmodSync(tool, 0o755);
process.env['SPARES_TEST_NODE'] = process.execPath;
after(() => rmSync(dir, { recursive: true, force: true }));

const spec = (over: Partial<SanitizedRunnerSpec> = {}): SanitizedRunnerSpec => ({
  sanitizerPath: tool,
  options: { ...DEFAULT_SANITIZER_OPTIONS, tool: 'memcheck' },
  nodePath: process.execPath,
  ordinal: 0,
  ...over,
});

async function until<T>(what: string, probe: () => T | null | false, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const gone = (pid: number) => until(`process ${pid} to exit`, () => !processRuns(pid));

test('a spare is taken only by a run with its tool, options and device; any other is stopped', async () => {
  const spares = new SanitizerSpares();
  try {
    spares.refill(spec());
    const pid = await until('the spare to start', () => spares.sparePid());
    const taken = spares.take(spec());
    assert.ok(taken, 'the same spec takes the spare');
    assert.equal(spares.taken, 1);
    assert.equal(taken.pool.status().runners[0]?.pid, pid);
    assert.equal(spares.sparePid(), null, 'taken, it is no longer held');
    await taken.dispose();
    await gone(pid);

    for (const other of [spec({ ordinal: 1 }), spec({ options: { ...DEFAULT_SANITIZER_OPTIONS, tool: 'racecheck' } })]) {
      spares.refill(spec());
      const held = await until('the spare to start', () => spares.sparePid());
      assert.equal(spares.take(other), null, 'another device or tool does not take it');
      assert.equal(spares.taken, 1);
      await gone(held);
    }
  } finally {
    await spares.dispose();
  }
});

test('an unused spare is stopped after its idle time; once disposed, no spare starts again', async () => {
  const spares = new SanitizerSpares(300);
  spares.refill(spec());
  const pid = await until('the spare to start', () => spares.sparePid());
  await gone(pid);
  assert.equal(spares.sparePid(), null);

  spares.refill(spec());
  const second = await until('the spare to start', () => spares.sparePid());
  const readers = () => listProcesses().filter((p) => p.ppid === process.pid && /file-reader\.js/.test(p.cmdline));
  assert.equal(readers().length, 1, 'a spare waits with the reader of its report');
  await spares.dispose();
  assert.equal(processRuns(second), false, 'dispose waits for the spare to be gone');
  await until('its reader to be gone', () => readers().length === 0);
  spares.refill(spec());
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(spares.sparePid(), null, 'no spare after dispose');
});

test('a spare that died while it waited is not taken', async () => {
  const spares = new SanitizerSpares();
  try {
    spares.refill(spec());
    const pid = await until('the spare to start', () => spares.sparePid());
    process.kill(pid, 'SIGKILL');
    await gone(pid);
    await until('the pool to see it gone', () => spares.sparePid() === null || null, 5_000).catch(() => undefined);
    assert.equal(spares.take(spec()), null);
  } finally {
    await spares.dispose();
  }
});

test("a run's runner keeps what the tool printed before anyone attached, and hands it over first", async () => {
  const runner = await SanitizedRunner.start(spec(), true);
  try {
    await until('the banner', () => runner.output.text().includes('COMPUTE-SANITIZER'));
    const seen: string[] = [];
    runner.attach((chunk) => seen.push(chunk.toString()));
    assert.match(seen.join(''), /^========= COMPUTE-SANITIZER \(stand-in\)/);
    assert.ok(runner.alive);
  } finally {
    await runner.dispose();
  }
  assert.equal(runner.alive, false);
});
