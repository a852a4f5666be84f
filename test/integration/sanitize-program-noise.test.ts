import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { parseJson, ROOT, runCli } from '../helpers/cli';
import { relocatedRecording } from '../helpers/program-fixtures';

// `gpu-workbench sanitize -- python3 <a sample>` against a stand-in for compute-sanitizer's process that replays
// what the real tool wrote on an H200 (test/fixtures/programs/h200), and, as CuPy does when it compiles a
// RawKernel with CUPY_CACHE_SAVE_CUDA_SOURCE=1, puts the recorded kernel source into $CUPY_CACHE_DIR. What is
// tested is the workbench's side: the environment it gives the program, the files it reads back, the report.
const H200 = join(ROOT, 'test/fixtures/programs/h200');
const dir = mkdtempSync(join(tmpdir(), 'wb-sanitize-noise-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const seen = join(dir, 'seen.env');
/** A recorded report, its frames moved to this checkout, as a file the stand-in can copy. */
const relocated = (name: string) => {
  const path = join(dir, name);
  writeFileSync(path, relocatedRecording(join(H200, name)));
  return path;
};
const tool = join(dir, 'compute-sanitizer');
writeFileSync(
  tool,
  `#!/bin/bash
if [ "$1" = --version ]; then echo 'Version 2025.3.1.0 (build 36400806) (public-release)'; exit 0; fi
save=''; prev=''
for a in "$@"; do [ "$prev" = --save ] && save=$a; prev=$a; done
printf 'CUPY_CACHE_DIR=%s\\nCUPY_CACHE_SAVE_CUDA_SOURCE=%s\\nexists=%s\\n' "$CUPY_CACHE_DIR" "$CUPY_CACHE_SAVE_CUDA_SOURCE" "$([ -d "$CUPY_CACHE_DIR" ] && echo yes)" > '${seen}'
[ -n "$FAKE_SOURCE" ] && cp "$FAKE_SOURCE" "$CUPY_CACHE_DIR/"
[ -n "$FAKE_XML" ] && cp "$FAKE_XML" "\${save//%p/$$}"
grep -v '^exit [0-9]* in [0-9]* ms$' "$FAKE_TEXT"
exit "$FAKE_EXIT"
`,
);
chmodSync(tool, 0o755);

const seenEnv = () =>
  Object.fromEntries(
    readFileSync(seen, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split('=', 2) as [string, string]),
  );
const OOB = {
  FAKE_XML: relocated('cupy-out-of-bounds.memcheck.xml'),
  FAKE_TEXT: join(H200, 'cupy-out-of-bounds.memcheck.txt'),
  FAKE_SOURCE: join(H200, 'cupy-cache/856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu'),
  FAKE_EXIT: '86',
};
const keptCache = join(dir, 'cupy-kernels');
const sanitize = (env: Record<string, string>, json = true, script = 'samples/programs/cupy-out-of-bounds/oob.py') =>
  runCli(['sanitize', ...(json ? ['--json'] : []), '--', 'python3', script], {
    env: { GPU_WORKBENCH_COMPUTE_SANITIZER: tool, GPU_WORKBENCH_CUPY_CACHE_DIR: keptCache, CUPY_CACHE_DIR: '', ...env },
  });

test("a CuPy RawKernel's invalid read is shown at its line in oob.py; the launch failure after it folds under it; CuPy's arrays are not leaks", async () => {
  const r = await sanitize(OOB);
  assert.equal(r.code, 1, r.stderr);
  const report = parseJson<SanitizeReport>(r);
  // The program got the workbench's kernel cache, with the sources saved; it is kept for the next run (a private folder).
  const env = seenEnv();
  assert.equal(env['CUPY_CACHE_SAVE_CUDA_SOURCE'], '1');
  assert.equal(env['CUPY_CACHE_DIR'], keptCache);
  assert.equal(env['exists'], 'yes');
  assert.equal(statSync(keptCache).mode & 0o777, 0o700);
  assert.ok(existsSync(join(keptCache, '856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu')), 'kept after the run');

  assert.equal(report.verdict, 'found');
  assert.equal(report.findings, 2);
  assert.equal(report.headline, 'memcheck found 2 findings in 1 place.');
  const [read] = report.groups;
  assert.equal(report.groups.length, 1);
  assert.deepEqual(
    [read!.kind, read!.where?.line, read!.sourceMapped?.file, read!.sourceMapped?.line, read!.sourceMapped?.cacheLine],
    ['memory-access', 4, join(ROOT, 'samples/programs/cupy-out-of-bounds/oob.py'), 21, 4],
  );
  assert.equal(read!.sourceMapped?.cachePath, '/tmp/tmp9kuab6ub/856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu');
  assert.deepEqual(
    read!.followedBy?.map((g) => g.example.api?.error),
    ['CUDA_ERROR_LAUNCH_FAILED'],
  );
  assert.deepEqual(
    report.heldAtExit?.map((h) => [h.holder, h.bytes, h.blocks]),
    [['cupy-arrays', 8000, 2]],
  );
  assert.match(report.details.join(' '), /Held by CuPy arrays still alive at exit — not a leak of yours: 8,000 bytes in 2 blocks/);

  const human = await sanitize(OOB, false);
  assert.match(human.stdout, /1\. Invalid read of 4 bytes out of bounds in scale at oob\.py:21 — 1 thread \(232,0,0\) in block \(3,0,0\)/);
  assert.match(human.stdout, /CuPy compiled it as \/tmp\/tmp9kuab6ub\/856f8193deab3878984904ecb40fceb5f1fe63c4\.cubin\.cu:4\./);
  assert.match(human.stdout, /Launched from <module> in oob\.py:29\./);
  assert.match(human.stdout, /… and 1 API error that followed it, because the context was dead: cuLaunchKernel \(CUDA_ERROR_LAUNCH_FAILED\)\./);
  assert.doesNotMatch(human.stdout, /^\s+2\. /m, 'one place, not three');
});

test('a kept cache already holding the kernel and its source (an earlier step compiled it) places the line as well', async () => {
  mkdirSync(keptCache, { recursive: true, mode: 0o700 });
  copyFileSync(OOB.FAKE_SOURCE, join(keptCache, '856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu'));
  writeFileSync(join(keptCache, '856f8193deab3878984904ecb40fceb5f1fe63c4.cubin'), 'cubin');
  const r = parseJson<SanitizeReport>(await sanitize({ ...OOB, FAKE_SOURCE: '' }, true));
  assert.equal(seenEnv()['CUPY_CACHE_DIR'], keptCache);
  assert.equal(r.groups[0]!.sourceMapped?.line, 21);
  assert.deepEqual(r.problems, []);
});

test('a kept cache that others could write, or a link, is not used: the run gets a folder of its own, removed after it', async () => {
  const open = join(dir, 'open-cache');
  mkdirSync(open, { mode: 0o777 });
  chmodSync(open, 0o777);
  const link = join(dir, 'linked-cache');
  symlinkSync(keptCache, link);
  for (const where of [open, link]) {
    const r = parseJson<SanitizeReport>(await sanitize({ ...OOB, GPU_WORKBENCH_CUPY_CACHE_DIR: where }));
    const env = seenEnv();
    assert.match(env['CUPY_CACHE_DIR']!, /gpu-workbench-sanitize-[^/]+\/cupy-kernel-cache$/, where);
    assert.equal(existsSync(env['CUPY_CACHE_DIR']!), false, 'removed with the run’s temporary folder');
    assert.equal(r.groups[0]!.sourceMapped?.line, 21);
  }
  assert.deepEqual(readdirSync(open), [], 'nothing written into a folder others can write');
});

test("the caller's own CUPY_CACHE_DIR is kept and read, and left in place", async () => {
  const cache = join(dir, 'my-cache');
  mkdirSync(cache, { recursive: true });
  const report = parseJson<SanitizeReport>(await sanitize({ ...OOB, CUPY_CACHE_DIR: cache }));
  assert.equal(seenEnv()['CUPY_CACHE_DIR'], cache);
  assert.equal(report.groups[0]!.sourceMapped?.line, 21);
  assert.ok(existsSync(join(cache, '856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu')));
  // Already cached without its source (CuPy saves it only when it compiles): the tool's place, and why.
  const empty = join(dir, 'cached-before');
  mkdirSync(empty, { recursive: true });
  const cached = parseJson<SanitizeReport>(await sanitize({ ...OOB, FAKE_SOURCE: '', CUPY_CACHE_DIR: empty }));
  assert.equal(cached.groups[0]!.sourceMapped ?? null, null);
  assert.ok(
    cached.problems.some((p) => /is not in CUPY_CACHE_DIR/.test(p)),
    cached.problems.join(' | '),
  );
});

test("a CuPy program whose only 'leaks' are its pool's is clean, exit 0, and says why", async () => {
  const r = await sanitize(
    { FAKE_XML: relocated('cupy-race.memcheck.xml'), FAKE_TEXT: join(H200, 'cupy-race.memcheck.txt'), FAKE_SOURCE: '', FAKE_EXIT: '86' },
    true,
    'samples/programs/cupy-race/reduce.py',
  );
  assert.equal(r.code, 0, r.stdout.slice(0, 2000));
  const report = parseJson<SanitizeReport>(r);
  assert.equal(report.verdict, 'clean');
  assert.deepEqual([report.findings, report.groups.length], [0, 0]);
  assert.match(report.headline, /found nothing of yours: the 264,192 bytes it reported as leaked were held at exit by CuPy's memory pool/);
});

test('PyTorch out of memory, read from the text alone: the two out-of-memory errors are the findings, the 120 GB its allocator held is not a leak', async () => {
  const r = await sanitize(
    { FAKE_XML: '', FAKE_TEXT: join(H200, 'pytorch-oom-too-large.memcheck.txt'), FAKE_SOURCE: '', FAKE_EXIT: '86' },
    true,
    'samples/programs/pytorch-oom-too-large/join.py',
  );
  const report = parseJson<SanitizeReport>(r);
  assert.equal(report.verdict, 'found');
  assert.equal(report.findingsFrom, 'text');
  assert.deepEqual(
    report.groups.map((g) => [g.kind, g.example.api?.call]),
    [
      ['api-error', 'cudaMalloc'],
      ['api-error', 'cudaGetLastError'],
    ],
  );
  assert.doesNotMatch(report.headline, /leaked/);
  assert.deepEqual(
    report.heldAtExit?.map((h) => [h.holder, h.bytes]),
    [['pytorch-caching-allocator', 120_091_312_128]],
  );
  assert.match(
    report.details.join(' '),
    /Held by PyTorch's caching allocator at exit — not a leak of yours: 120,091,312,128 bytes \(111\.84 GiB\) in 2 blocks, asked for at join\.py:13, join\.py:12\./,
  );
});
