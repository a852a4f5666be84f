import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { DEFAULT_SANITIZER_OPTIONS } from '../../core/sanitizer/sanitizer-args';
import { listProcesses, processRuns } from '../../main/process/process-state';
import { prepareSanitizedRerun } from '../../main/services/sanitize-plan-service';
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
const sparePid = (spares: SanitizerSpares) => spares.spareStatus()?.pid ?? null;
/** A run's take of the spare, as sanitizePlan makes it (the runner is the caller's to dispose). */
const take = (spares: SanitizerSpares, s: SanitizedRunnerSpec) =>
  spares.during(
    s,
    async (spare) => spare,
    () => false,
  );
/** This process's children running the runner (the stand-in tool execs it) or a report reader. */
const children = (pattern: RegExp) => listProcesses().filter((p) => p.ppid === process.pid && pattern.test(p.cmdline));

test('a spare is taken by a run with its tool, options and device, even one still starting (its start is waited for)', async () => {
  const spares = new SanitizerSpares();
  try {
    spares.refill(spec());
    const taken = await take(spares, spec());
    assert.ok(taken, 'the same spec takes the spare being made');
    assert.equal(spares.taken, 1);
    assert.equal(sparePid(spares), null, 'taken, it is no longer held');
    const pid = taken.pool.status().runners[0]?.pid;
    assert.ok(pid && processRuns(pid), 'its runner was started ahead');
    await taken.dispose();
    await gone(pid);
  } finally {
    await spares.dispose();
  }
});

test('a spare for another tool or device is stopped, and gone before take answers', async () => {
  const spares = new SanitizerSpares();
  try {
    for (const other of [spec({ ordinal: 1 }), spec({ options: { ...DEFAULT_SANITIZER_OPTIONS, tool: 'racecheck' } })]) {
      spares.refill(spec());
      const held = await until('the spare to start', () => sparePid(spares));
      assert.equal(await take(spares, other), null, 'another device or tool does not take it');
      assert.equal(processRuns(held), false, 'and it is gone when take answers');
    }
    assert.equal(spares.taken, 0);
  } finally {
    await spares.dispose();
  }
});

test('a spare whose context did not open is not taken (no driver here: its runner says so once ready)', async () => {
  const spares = new SanitizerSpares();
  try {
    spares.refill(spec());
    const ready = await until('the spare to be ready', () => {
      const status = spares.spareStatus();
      return status && status.startupMs !== null ? status : null;
    });
    assert.equal(ready.contextReady, false);
    assert.equal(await take(spares, spec()), null, 'a run starts its own runner rather than meet that error again');
    assert.equal(processRuns(ready.pid), false);
  } finally {
    await spares.dispose();
  }
});

test('clear while a spare is still being made: nothing is left running', async () => {
  const spares = new SanitizerSpares();
  spares.refill(spec());
  await spares.clear();
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(sparePid(spares), null);
  assert.deepEqual(children(/runner\.js|file-reader\.js/), []);
  await spares.dispose();
});

test('an unused spare is stopped after its idle time; once disposed, no spare starts again', async () => {
  const idle = new SanitizerSpares(300);
  idle.refill(spec());
  const pid = await until('the spare to start', () => sparePid(idle));
  await gone(pid);
  assert.equal(sparePid(idle), null);
  await idle.dispose();

  // One that stays (the default idle time) while its reader is looked for: a 300 ms idle time could end it first.
  const spares = new SanitizerSpares();
  spares.refill(spec());
  const second = await until('the spare to start', () => sparePid(spares));
  // Its reader is spawned with it, but /bin/sh then execs Node: a read of /proc in that instant sees no command line.
  await until('the reader of its report, beside the spare', () => children(/file-reader\.js/).length === 1, 5_000);
  assert.equal(sparePid(spares), second, 'the same spare, still held');
  await spares.dispose();
  assert.equal(processRuns(second), false, 'dispose waits for the spare to be gone');
  await until('its reader to be gone', () => children(/file-reader\.js/).length === 0);
  spares.refill(spec());
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(sparePid(spares), null, 'no spare after dispose');
});

test('a spare that died while it waited is not taken', async () => {
  const spares = new SanitizerSpares();
  try {
    spares.refill(spec());
    const pid = await until('the spare to start', () => sparePid(spares));
    process.kill(pid, 'SIGKILL');
    await gone(pid);
    assert.equal(await take(spares, spec()), null);
  } finally {
    await spares.dispose();
  }
});

test("a run's runner keeps what the tool printed before anyone attached, and hands it over first", async () => {
  const runner = await SanitizedRunner.start(spec());
  runner.startAhead(spec());
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

test('no spare starts while a run under the tool is on, nor beside other work that needs the device; one starts after a run that asks', async () => {
  const spares = new SanitizerSpares();
  try {
    let during: number | null = null;
    await spares.during(
      spec(),
      async (spare) => {
        assert.equal(spare, null);
        spares.refill(spec());
        await new Promise((resolve) => setTimeout(resolve, 300));
        during = sparePid(spares);
      },
      () => true,
    );
    assert.equal(during, null, 'none beside the run');
    const after = await until('the spare started after the run', () => sparePid(spares));
    await spares.without(async () => {
      assert.equal(processRuns(after), false, 'other work clears it first');
      spares.refill(spec());
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(sparePid(spares), null, 'and none starts beside it');
    });
  } finally {
    await spares.dispose();
  }
});

test('a plain run whose diagnosis offers memcheck starts the runner the re-run under memcheck takes', async () => {
  const before = process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'];
  process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'] = tool;
  const spares = new SanitizerSpares();
  try {
    // Taken at once: here (no driver) a spare that has become ready is one whose context failed, which is not taken.
    await prepareSanitizedRerun(spares, { device: 0 }, 'memcheck');
    const taken = await take(spares, spec());
    assert.ok(taken, 'the same tool, default options and device: taken');
    await taken.dispose();
    await prepareSanitizedRerun(spares, { device: 0 }, 'racecheck');
    assert.equal(await take(spares, spec()), null, 'a re-run under another tool does not take it');
    await prepareSanitizedRerun(spares, { device: 1 }, 'memcheck');
    assert.equal(await take(spares, spec()), null, 'nor one on another device');
  } finally {
    await spares.dispose();
    if (before === undefined) delete process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'];
    else process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'] = before;
  }
});
