import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { READER_MEMORY_ENV } from '../../core/readers/reader-protocol';
import {
  defaultReaderLauncher,
  MAX_READERS,
  MAX_WAITING_READERS,
  ReaderError,
  runReader,
  startWaitingReader,
  useReaderLauncher,
  type ReaderLauncher,
} from '../../main/readers/reader-process';
import { ROOT } from '../helpers/cli';

// A file from outside is read in a reader process of its own. Its stops are tested through the real kill paths: the
// reader is frozen (SIGSTOP) so that only a kill can end it, then the host cancels, times out, or is itself SIGKILLed.
const dir = mkdtempSync(join(tmpdir(), 'wb-reader-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const BUNDLE = join(ROOT, 'test/fixtures/bundles/oob-off-by-one.zip');

/** A copy of a real bundle under a name no other process has in its command line. */
function uniqueBundle(name: string): string {
  const path = join(dir, `${name}-${process.pid}-${Math.random().toString(36).slice(2)}.zip`);
  copyFileSync(BUNDLE, path);
  return path;
}

/** The pids whose command line names `marker` (and `also`, if given): the reader, its reaper, a host naming the file. */
function processesNaming(marker: string, startingWith = ''): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(marker) && cmdline.startsWith(startingWith)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

async function until<T>(what: string, f: () => T | null | undefined | false, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Freezes the reader as soon as it starts: from then on only a kill ends it. */
const freezeReader = (marker: string) =>
  until('the reader to start', () => {
    // The reader itself (node …/file-reader.js), not the reaper beside it, which must stay free to act.
    const pids = processesNaming(marker, `${process.execPath}\0--max-old-space-size`);
    if (!pids.length) return null;
    for (const pid of pids) process.kill(pid, 'SIGSTOP');
    return pids;
  });

test('a real bundle is read in a reader process and its view comes back', async () => {
  const { value } = await runReader<{ manifest: { schema: number }; notes: string[] }>({ kind: 'bundle-view', path: BUNDLE }, 'the bundle');
  assert.equal(typeof value.manifest.schema, 'number');
  assert.ok(Array.isArray(value.notes));
});

test('cancel kills a reader that does not answer, at once, and nothing of it is left', async () => {
  const path = uniqueBundle('cancel');
  const controller = new AbortController();
  const reading = runReader({ kind: 'bundle-view', path }, 'the bundle', { signal: controller.signal });
  await freezeReader(path);
  const started = Date.now();
  controller.abort();
  await assert.rejects(reading, (e: unknown) => e instanceof ReaderError && e.kind === 'cancelled');
  await until('the reader to be gone', () => processesNaming(path).length === 0, 2_000);
  console.log(`cancelled and gone in ${Date.now() - started} ms`);
});

test('past its time limit the reader is killed and the refusal says how long it was given', async () => {
  const path = uniqueBundle('timeout');
  const reading = runReader({ kind: 'bundle-view', path }, 'The bundle', { limits: { timeoutMs: 1_500 } });
  await freezeReader(path);
  await assert.rejects(reading, (e: unknown) => e instanceof ReaderError && e.kind === 'timed-out' && /longer than 1\.5 s/.test(e.message));
  await until('the reader to be gone', () => processesNaming(path).length === 0, 2_000);
});

test('a reader that runs out of heap is a refusal in words, and the host goes on', async () => {
  const path = uniqueBundle('heap');
  await assert.rejects(
    runReader({ kind: 'bundle-view', path }, 'The bundle', { limits: { heapMb: 4 } }),
    (e: unknown) => e instanceof ReaderError && /The bundle was not opened/.test(e.message) && /unaffected/.test(e.message),
  );
  // The next read works.
  await runReader({ kind: 'bundle-view', path: BUNDLE }, 'the bundle');
});

test('an answer larger than allowed is refused while it streams', async () => {
  await assert.rejects(
    runReader({ kind: 'bundle-view', path: BUNDLE }, 'The bundle', { limits: { answerBytes: 1024 } }),
    (e: unknown) => e instanceof ReaderError && e.kind === 'too-large' && /larger than 0 MiB|larger than/.test(e.message),
  );
});

test('a host killed with SIGKILL takes its reader with it', async () => {
  const path = uniqueBundle('host-killed');
  // The host is the CLI, reading the bundle as `bundle inspect` does.
  const host = spawn(process.execPath, [join(ROOT, 'dist/main/cli.js'), 'bundle', 'inspect', path], { stdio: 'ignore' });
  await freezeReader(path);
  host.kill('SIGKILL');
  await until('the reader to die with its host', () => processesNaming(path).length === 0, 5_000);
});

test(`at most ${MAX_READERS} readers run at once: a third waits for a slot and starts when one is free`, async () => {
  const paths = [uniqueBundle('slot-a'), uniqueBundle('slot-b'), uniqueBundle('slot-c')];
  const controllers = paths.map(() => new AbortController());
  const reads = paths.map((path, i) => runReader({ kind: 'bundle-view', path }, 'the bundle', { signal: controllers[i]!.signal }).catch((e: unknown) => e));
  await freezeReader(paths[0]!);
  await freezeReader(paths[1]!);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(processesNaming(paths[2]!), [], 'the third has not started');
  controllers[0]!.abort();
  // The third starts once the first's slot is free, and answers.
  assert.equal(((await reads[2]) as { value: { notes: unknown } }).value.notes !== undefined, true);
  controllers[1]!.abort();
  assert.ok((await reads[1]) instanceof ReaderError);
});

/** A reader started as the desktop app starts one (Node directly, its memory limit in the environment), with `nodeArgs`. */
function directReaderLauncher(nodeArgs: string[], onStart: (exit: Promise<unknown>) => void = () => undefined): ReaderLauncher {
  return (entry, job, limits) => {
    const child = spawn(process.execPath, [...nodeArgs, `--max-old-space-size=${limits.heapMb}`, entry, job], {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, [READER_MEMORY_ENV]: String(limits.memoryMb) },
    });
    onStart(new Promise((resolve) => child.once('exit', resolve)));
    return {
      stdout: child.stdout,
      kill: () => child.kill('SIGKILL'),
      onClose: (h) => child.once('close', h),
      onError: (h) => child.once('error', h),
      go: () => undefined,
    };
  };
}

test('a reader started without ulimit, as the desktop app starts one, caps its own memory before it reads', async (t) => {
  // The utility launcher's part that runs here: Node started directly, its memory limit in the environment.
  const direct = directReaderLauncher([]);
  useReaderLauncher(direct);
  t.after(() => useReaderLauncher(defaultReaderLauncher));
  const { value } = await runReader<{ notes: unknown }>({ kind: 'bundle-view', path: BUNDLE }, 'the bundle', { limits: { memoryMb: 1024 } });
  assert.ok(Array.isArray(value.notes));
  // 8 MiB of writable memory is less than Node needs to read anything: the limit holds, and it is said.
  await assert.rejects(
    runReader({ kind: 'bundle-view', path: BUNDLE }, 'The bundle', { limits: { memoryMb: 8 } }),
    (e: unknown) => e instanceof ReaderError && /The bundle was not opened/.test(e.message),
  );
});

test('a reader that answers and lives on, as an Electron utility process does, is answered at its answer and then ended', async (t) => {
  // Electron's utility processes do not exit when their work is done (electron/electron#47228): a timer stands in.
  const keepAlive = join(dir, 'keep-alive.cjs');
  writeFileSync(keepAlive, 'setInterval(() => undefined, 1000);\n');
  let ended: Promise<unknown> | undefined;
  const livesOn = directReaderLauncher(['--require', keepAlive], (exit) => (ended = exit));
  useReaderLauncher(livesOn);
  t.after(() => useReaderLauncher(defaultReaderLauncher));
  const started = performance.now();
  const { value } = await runReader<{ notes: unknown }>({ kind: 'bundle-view', path: BUNDLE }, 'the bundle', { limits: { timeoutMs: 60_000 } });
  assert.ok(Array.isArray(value.notes));
  assert.ok(performance.now() - started < 15_000, `answered after ${Math.round(performance.now() - started)} ms, not at the 60 s limit`);
  assert.equal(await ended, null, 'and the reader was ended (killed: no exit code)');
});

/** A folder compute-sanitizer would write into, named so its reader can be found; the XML is a real memcheck report. */
const XML = join(ROOT, 'test/fixtures/sanitizer/h100/memcheck-null.xml');
function reportsFolder(name: string): string {
  const folder = join(dir, `${name}-${process.pid}-${Math.random().toString(36).slice(2)}`);
  mkdirSync(folder);
  return folder;
}
type Reports = { findings: { kind: string }[]; xmlFiles: { name: string }[] };

test('a waiting reader starts before the tool has written its report, and reads the report written after it started', async () => {
  const folder = reportsFolder('waiting');
  const reader = startWaitingReader({ kind: 'sanitizer-reports', dir: folder, tool: 'memcheck' }, 'The reports');
  // Started, and waiting: the process is there before there is anything to read.
  await until('the waiting reader to start', () => processesNaming(folder, `${process.execPath}\0--max-old-space-size`).length > 0);
  await new Promise((r) => setTimeout(r, 300));
  copyFileSync(XML, join(folder, 'report-1855.xml'));
  const { value } = await reader.read<Reports>();
  assert.deepEqual(
    value.xmlFiles.map((f) => f.name),
    ['report-1855.xml'],
  );
  assert.ok(value.findings.length > 0);
  await until('the reader to be gone', () => processesNaming(folder).length === 0, 2_000);
});

test('a waiting reader never told to go is ended by dispose, and frees its place', async () => {
  const folders = Array.from({ length: MAX_WAITING_READERS }, (_, i) => reportsFolder(`disposed-${i}`));
  const readers = folders.map((folder) => startWaitingReader({ kind: 'sanitizer-reports', dir: folder, tool: 'memcheck' }, 'The reports'));
  for (const folder of folders) await until('the waiting readers to start', () => processesNaming(folder).length > 0);
  for (const reader of readers) reader.dispose();
  for (const folder of folders) await until('the disposed readers to be gone', () => processesNaming(folder).length === 0, 2_000);
  // Their places are free again: the next waiting reader starts early.
  const folder = reportsFolder('after-dispose');
  const next = startWaitingReader({ kind: 'sanitizer-reports', dir: folder, tool: 'memcheck' }, 'The reports');
  await until('the next waiting reader to start', () => processesNaming(folder).length > 0);
  next.dispose();
  await until('it to be gone', () => processesNaming(folder).length === 0, 2_000);
});

test(`waiting readers take no read slot; past ${MAX_WAITING_READERS} of them one is not started early, and its read still answers`, async (t) => {
  const waitingFolders = Array.from({ length: MAX_WAITING_READERS }, (_, i) => reportsFolder(`waiting-${i}`));
  const waiting = waitingFolders.map((folder) => startWaitingReader({ kind: 'sanitizer-reports', dir: folder, tool: 'memcheck' }, 'The reports'));
  t.after(() => waiting.forEach((reader) => reader.dispose()));
  for (const folder of waitingFolders) await until('the waiting readers to start', () => processesNaming(folder).length > 0);
  // Every read slot is still free: as many files as there are slots open at once, while those wait.
  const paths = Array.from({ length: MAX_READERS + 1 }, (_, i) => uniqueBundle(`beside-waiting-${i}`));
  const opened = await Promise.all(paths.map((path) => runReader<{ notes: unknown }>({ kind: 'bundle-view', path }, 'the bundle')));
  assert.ok(opened.every((o) => Array.isArray(o.value.notes)));
  const folder = reportsFolder('no-place');
  copyFileSync(XML, join(folder, 'report-7.xml'));
  const late = startWaitingReader({ kind: 'sanitizer-reports', dir: folder, tool: 'memcheck' }, 'The reports');
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(processesNaming(folder), [], 'no waiting reader started beyond the limit');
  assert.ok((await late.read<Reports>()).value.findings.length > 0);
});

test('a waiting reader cancelled while it reads is killed, and the refusal says so', async () => {
  const folder = reportsFolder('cancel-waiting');
  const reader = startWaitingReader({ kind: 'sanitizer-reports', dir: folder, tool: 'memcheck' }, 'The reports');
  await freezeReader(folder);
  const controller = new AbortController();
  const reading = reader.read({ signal: controller.signal });
  controller.abort();
  await assert.rejects(reading, (e: unknown) => e instanceof ReaderError && e.kind === 'cancelled' && /Reading The reports was cancelled/.test(e.message));
  await until('the reader to be gone', () => processesNaming(folder).length === 0, 2_000);
});

test('a reader started by the default launcher runs under its writable-memory limit (ulimit -d), not only the reaper beside it', async () => {
  const path = uniqueBundle('limits');
  const controller = new AbortController();
  const reading = runReader({ kind: 'bundle-view', path }, 'the bundle', { signal: controller.signal, limits: { memoryMb: 1536 } }).catch((e: unknown) => e);
  const [pid] = await freezeReader(path);
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max data size'));
  controller.abort();
  await reading;
  assert.match(line ?? '', new RegExp(`^Max data size\\s+${1536 * 2 ** 20}\\s+${1536 * 2 ** 20}\\s+bytes`), line);
});

test('a waiting reader that died before it was asked: its read fails at once, in words that name what it was to read', async () => {
  const folder = reportsFolder('died-early');
  const reader = startWaitingReader({ kind: 'sanitizer-reports', dir: folder, tool: 'memcheck' }, 'The reports');
  const [pid] = await until('the waiting reader to start', () => {
    const pids = processesNaming(folder, `${process.execPath}\0--max-old-space-size`);
    return pids.length ? pids : null;
  });
  process.kill(pid!, 'SIGKILL');
  await until('it to be gone', () => processesNaming(folder).length === 0, 2_000);
  const started = Date.now();
  await assert.rejects(
    reader.read(),
    (e: unknown) => e instanceof ReaderError && /^The reports was not opened: its reader was killed \(SIGKILL\)/.test(e.message),
  );
  assert.ok(Date.now() - started < 1_000);
});

test(`a waiting reader reads within the ${MAX_READERS} read slots: with every slot taken, it reads once one is free`, async () => {
  const paths = Array.from({ length: MAX_READERS }, (_, i) => uniqueBundle(`slots-${i}`));
  const controllers = paths.map(() => new AbortController());
  const busy = paths.map((path, i) => runReader({ kind: 'bundle-view', path }, 'the bundle', { signal: controllers[i]!.signal }).catch((e: unknown) => e));
  for (const path of paths) await freezeReader(path);
  const folder = reportsFolder('slot-wait');
  copyFileSync(XML, join(folder, 'report-9.xml'));
  const reader = startWaitingReader({ kind: 'sanitizer-reports', dir: folder, tool: 'memcheck' }, 'The reports');
  let answered = false;
  const reading = reader.read<Reports>().then((r) => ((answered = true), r));
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(answered, false, 'it waits for a slot');
  controllers[0]!.abort();
  assert.ok((await reading).value.findings.length > 0);
  controllers[1]!.abort();
  await Promise.all(busy);
});
