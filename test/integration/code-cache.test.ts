import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { test } from 'node:test';

import { ROOT, runCli } from '../helpers/cli';

// The bundles load through V8's code cache (main/boot/code-cache.ts). The cache is the user's own data, yet a
// start must never depend on it: a first start writes it, a later one reads it, and what sits in its place
// (a FIFO, a folder) is passed over without waiting.
test('the code cache is written on a first start, and a FIFO or a folder in its place never stalls the next', async () => {
  const home = mkdtempSync(join(tmpdir(), 'wb-code-cache-'));
  const env = { XDG_CACHE_HOME: home };
  const first = await runCli(['--help'], { env, timeoutMs: 20_000 });
  assert.equal(first.code, 0, first.stderr);
  const dir = join(home, 'gpu-workbench', 'code-cache');
  const written = readdirSync(dir).filter((n) => n.endsWith('.bin'));
  assert.equal(written.length, 1);
  assert.ok(statSync(join(dir, written[0]!)).size > 100_000, 'V8 wrote the compiled CLI');
  assert.equal(statSync(dir).mode & 0o777, 0o700);

  unlinkSync(join(dir, written[0]!));
  execFileSync('mkfifo', [join(dir, written[0]!)]);
  const withFifo = await runCli(['--help'], { env, timeoutMs: 20_000 });
  assert.equal(withFifo.code, 0, withFifo.stderr);
  assert.match(withFifo.stdout, /Usage: gpu-workbench/);
  assert.ok(statSync(join(dir, written[0]!)).isFile(), 'the FIFO was replaced by a cache file');
});

// The CLI initialises only the command it runs, and a cache holds what its first start compiled: each command has its own.
test('each CLI command has its own code cache, and a command started again reads its own', async () => {
  const home = mkdtempSync(join(tmpdir(), 'wb-code-cache-'));
  const env = { XDG_CACHE_HOME: home };
  const dir = join(home, 'gpu-workbench', 'code-cache');
  const caches = () =>
    readdirSync(dir)
      .filter((n) => n.endsWith('.bin'))
      .sort();
  assert.equal((await runCli(['explain', 'CUDA error: out of memory'], { env, timeoutMs: 20_000 })).code, 0);
  const afterExplain = caches();
  assert.equal(afterExplain.length, 1);
  const diagnose = await runCli(['diagnose', '--help'], { env, timeoutMs: 20_000 });
  assert.equal(diagnose.code, 0, diagnose.stderr);
  const afterDiagnose = caches();
  assert.equal(afterDiagnose.length, 2, 'diagnose wrote its own cache beside explain’s');
  assert.equal((await runCli(['diagnose', '--help'], { env, timeoutMs: 20_000 })).code, 0);
  assert.deepEqual(caches(), afterDiagnose, 'the second diagnose read its cache and wrote no other');
  // Anything that is not a command's name shares one cache: a path or a long word does not make files without end.
  for (const args of [['--help'], ['/tmp/x.cu'], ['x'.repeat(64)]]) await runCli(args, { env, timeoutMs: 20_000 });
  assert.equal(caches().length, 3, 'help, the path and the long word share one cache');
});

// A command that runs past the first second is cached again at its exit: the cache then holds all it compiled (a
// diagnosis's later steps and its report), not only its first second, and the next start reads that one.
test('a command that runs past a second is cached again at its exit, and the next start of it writes nothing', async () => {
  const home = mkdtempSync(join(tmpdir(), 'wb-code-cache-'));
  const env = { XDG_CACHE_HOME: home };
  const dir = join(home, 'gpu-workbench', 'code-cache');
  const started = Date.now();
  const first = await runCli(['diagnose', '--json', '--', 'sleep', '1.6'], { env, timeoutMs: 30_000 });
  assert.equal(first.code, 0, first.stderr);
  const [cache] = readdirSync(dir).filter((n) => n.endsWith('.bin'));
  assert.ok(cache, 'the diagnosis wrote its cache');
  const { mtimeMs: written, ino } = statSync(join(dir, cache));
  assert.ok(written - started >= 1_600, `written ${Math.round(written - started)} ms after the start, not at the program's end`);
  const second = await runCli(['diagnose', '--json', '--', 'true'], { env, timeoutMs: 30_000 });
  assert.equal(second.code, 0, second.stderr);
  // A write replaces the file (a new one renamed over it); a read only moves its time.
  assert.equal(statSync(join(dir, cache)).ino, ino, 'the second start read the cache and wrote none');
  assert.deepEqual(
    readdirSync(dir).filter((n) => n.endsWith('.bin')),
    [cache],
  );
});

// The oldest caches are pruned past 48 files: a cache that is read counts as used then, so what runs stays.
test('a cache read is kept when newer ones push the oldest out; one nobody reads goes', async () => {
  const home = mkdtempSync(join(tmpdir(), 'wb-code-cache-'));
  const env = { XDG_CACHE_HOME: home };
  const dir = join(home, 'gpu-workbench', 'code-cache');
  const bins = () => readdirSync(dir).filter((n) => n.endsWith('.bin'));
  assert.equal((await runCli(['explain', 'CUDA error: out of memory'], { env, timeoutMs: 20_000 })).code, 0);
  const [explain] = bins();
  assert.equal((await runCli(['diagnose', '--help'], { env, timeoutMs: 20_000 })).code, 0);
  const diagnose = bins().find((n) => n !== explain)!;
  // 47 caches written after both (another build's, other commands'), then explain read again.
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (const name of [explain, diagnose]) utimesSync(join(dir, name!), hourAgo, hourAgo);
  for (let i = 0; i < 47; i++) writeFileSync(join(dir, `other-${String(i).padStart(2, '0')}.bin`), 'x');
  assert.equal((await runCli(['explain', 'CUDA error: out of memory'], { env, timeoutMs: 20_000 })).code, 0);
  // A new cache (the --help start) makes 50: the two oldest go, and diagnose, read an hour ago, is the oldest of all.
  assert.equal((await runCli(['--help'], { env, timeoutMs: 20_000 })).code, 0);
  const left = bins();
  assert.equal(left.length, 48);
  assert.ok(left.includes(explain!), 'explain, read just now, is kept');
  assert.ok(!left.includes(diagnose), 'diagnose, unread for an hour, went');
});

// `diagnose` starts from a bundle of its own, which holds no other command: less to read and compile at each start.
test('gpu-workbench diagnose loads its own bundle, which answers as the whole CLI does and holds no other command', () => {
  const home = mkdtempSync(join(tmpdir(), 'wb-code-cache-'));
  const preload = join(home, 'which-bundle.cjs');
  writeFileSync(
    preload,
    `const fs = require('node:fs'); const read = fs.readFileSync;
     fs.readFileSync = function (file, ...rest) { if (/\\.impl\\.js$/.test(String(file))) process.stderr.write('BUNDLE ' + String(file) + '\\n'); return read.call(this, file, ...rest); };`,
  );
  const run = (args: string[]) =>
    execFileSync(process.execPath, args, { cwd: ROOT, env: { ...process.env, XDG_CACHE_HOME: home }, encoding: 'utf8', stdio: 'pipe' });
  const loaded = (args: string[]) => {
    const r = spawnSync(process.execPath, ['--require', preload, join(ROOT, 'bin/gpu-workbench.js'), ...args], {
      cwd: ROOT,
      env: { ...process.env, XDG_CACHE_HOME: home },
      encoding: 'utf8',
    });
    return [...r.stderr.matchAll(/^BUNDLE (.+)$/gm)].map((m) => basename(m[1]!));
  };
  assert.deepEqual(loaded(['diagnose', '--help']), ['cli-diagnose.impl.js']);
  assert.deepEqual(loaded(['explain', 'CUDA error: out of memory']), ['cli.impl.js']);
  assert.deepEqual(loaded(['--help']), ['cli.impl.js']);
  const whole = run([join(ROOT, 'dist/main/cli.impl.js'), 'diagnose', '--help']);
  assert.match(whole, /Usage: gpu-workbench diagnose/);
  assert.equal(run([join(ROOT, 'dist/main/cli.js'), 'diagnose', '--help']), whole);
  const alone = run([join(ROOT, 'dist/main/cli-diagnose.impl.js'), '--help']);
  assert.match(alone, /^ {2}diagnose /m);
  assert.doesNotMatch(alone, /^ {2}(explain|run|compile|sanitize) /m);
});
