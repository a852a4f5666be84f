import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import type { HostFrame, SanitizerFinding, SanitizerTool } from '../../core/sanitizer/findings';
import { describeGroup, groupFindings, LINEINFO_ADVICE, userFrame } from '../../core/sanitizer/group';
import { mergeText, parseSanitizerText } from '../../core/sanitizer/parse-text';
import { parseSanitizerTextFindings } from '../../core/sanitizer/parse-text-findings';
import { parseSanitizerXml } from '../../core/sanitizer/parse-xml';
import { ROOT } from '../helpers/cli';

const DIR = join(ROOT, 'test/fixtures/sanitizer/h100');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');
const findings = (tool: SanitizerTool, name: string) => {
  const r = parseSanitizerXml(tool, read(name));
  assert.deepEqual(r.problems, []);
  return r.findings;
};
/** The XML with the text of the same run merged in, as the workbench reads a `--xml --save` run. */
const run = (tool: SanitizerTool, name: string) => {
  const info = parseSanitizerText(read(`${name}.xml.txt`));
  return { findings: mergeText(findings(tool, `${name}.xml`), info), summary: info.summary };
};

test('memcheck null pointer: 32 writes are one group, threads 0–31 of block 0, then the API error and the two leaks', () => {
  const { findings: f, summary } = run('memcheck', 'memcheck-null');
  const groups = groupFindings(f);
  assert.deepEqual(
    groups.map((g) => [g.kind, g.count]),
    [
      ['memory-access', 32],
      ['api-error', 1],
      ['leak', 1],
      ['leak', 1],
    ],
  );
  const g = groups[0]!;
  assert.equal(g.tool, 'memcheck');
  assert.equal(g.severity, 'error');
  assert.deepEqual(g.threads, { min: { x: 0, y: 0, z: 0 }, max: { x: 31, y: 0, z: 0 } });
  assert.deepEqual(g.blocks, { min: { x: 0, y: 0, z: 0 }, max: { x: 0, y: 0, z: 0 } });
  assert.equal(g.example, f[0], 'the first record is the example');
  assert.equal(g.where?.line, 25);
  assert.deepEqual(g.userFrame, { func: 'main', module: '/tmp/cases', pc: '0x8f3e', file: null, line: null });
  assert.equal(
    describeGroup(g, summary),
    'Invalid write of 4 bytes out of bounds in writeThrough at sanitizer_cases.cu:25 — 32 threads (0–31,0,0) in block (0,0,0); the address is 0x0, a null pointer (or a small offset from one).',
  );
});

test('memcheck off-by-one: the sentence a person reads, with the nearest allocation from the text', () => {
  const { findings: f, summary } = run('memcheck', 'memcheck-oob');
  const [write, api, leak1, leak2] = groupFindings(f);
  assert.equal(
    describeGroup(write!, summary),
    'Invalid write of 4 bytes out of bounds in offByOne at sanitizer_cases.cu:12 — 1 thread (232,0,0) in block (3,0,0); 1 byte after the nearest allocation (4,000 bytes).',
  );
  assert.deepEqual(write!.userFrame?.func, 'main', 'past libcuda, the static cudart, the launch helper and the kernel-named stub');
  assert.equal(
    describeGroup(api!),
    'cudaDeviceSynchronize returned cudaErrorLaunchFailure (719): unspecified launch failure, called from main (0x9206) in cases. This error is what a kernel fault leaves behind: fix the kernel finding first.',
  );
  // Two cudaMalloc calls in main that never got freed: two places, two groups.
  assert.equal(leak1!.leakedBytes, 4000);
  assert.deepEqual(leak1!.userFrame, { func: 'main', module: '/tmp/cases', pc: '0x8ce2', file: null, line: null }, 'past cudaMalloc and cudaMalloc<float>');
  assert.equal(leak2!.userFrame?.pc, '0x8cf3');
  assert.equal(describeGroup(leak1!), 'Leaked 4,000 bytes in 1 allocation, allocated at main (0x8ce2) in cases: nothing freed it before the program ended.');
});

test('a small global address is a null pointer; a small shared one is an offset like any other', () => {
  const write = findings('memcheck', 'memcheck-null.xml')[0]!;
  const far = { ...write, access: { ...write.access!, address: '0x3fffc' } };
  assert.match(describeGroup(groupFindings([far])[0]!), /the address is 0x3fffc, a null pointer/);
  const shared = { ...write, access: { ...write.access!, space: '__shared__', address: '0x680' } };
  const said = describeGroup(groupFindings([shared])[0]!);
  assert.match(said, /^Invalid write of 4 bytes in shared memory out of bounds in writeThrough/);
  assert.doesNotMatch(said, /null/);
});

test('without -lineinfo: the group says line info is missing and how to add it, for nvcc, NVRTC, CuPy and PyTorch', () => {
  const { findings: f, summary } = run('memcheck', 'memcheck-oob-nolineinfo');
  const g = groupFindings(f)[0]!;
  assert.equal(g.where?.line, null);
  const said = describeGroup(g, summary);
  assert.match(
    said,
    /^Invalid write of 4 bytes out of bounds in offByOne \(pc 0xc0\) — 1 thread \(232,0,0\) in block \(3,0,0\); 1 byte after the nearest allocation/,
  );
  assert.ok(said.endsWith(LINEINFO_ADVICE));
  assert.match(said, /Line info is missing/);
  assert.ok(said.includes('nvcc or NVRTC: -lineinfo'));
  assert.ok(said.includes('RawKernel(code, name, options=("-lineinfo",))'));
  assert.ok(said.includes('extra_cuda_cflags=["-lineinfo"]'));
  assert.doesNotMatch(describeGroup(groupFindings(run('memcheck', 'memcheck-oob').findings)[0]!), /lineinfo/);
});

test('--print-limit cut the findings: the counts are lower bounds', () => {
  const { findings: f, summary } = run('memcheck', 'memcheck-many-limit10');
  const [g, ...rest] = groupFindings(f);
  assert.equal(rest.length, 0);
  assert.equal(g!.count, 10);
  assert.deepEqual(g!.blocks, { min: { x: 8, y: 0, z: 0 }, max: { x: 8, y: 0, z: 0 } });
  assert.match(describeGroup(g!, summary), /— at least 10 threads \(0–9,0,0\) in block \(8,0,0\)/);
  assert.match(describeGroup(g!), /— 10 threads/);
});

test('a Python leak: the user frame is the Python line (leak.py:24), past libcudart', () => {
  const [g] = groupFindings(findings('memcheck', 'program-ctypes-leak.xml'));
  assert.deepEqual(g!.userFrame, { func: '<module>', module: null, pc: null, file: '/work/main/samples/programs/ctypes-leak/leak.py', line: 24 });
  assert.equal(g!.leakedBytes, 1_048_576);
  assert.equal(describeGroup(g!), 'Leaked 1,048,576 bytes in 1 allocation, allocated at <module> in leak.py:24: nothing freed it before the program ended.');
});

test('leaks from one place add up; errors come before warnings, then the most frequent first', () => {
  const leak = findings('memcheck', 'memcheck-leak.xml')[0]!;
  const same = [leak, { ...leak, leak: { bytes: 96, address: '0x1' } }];
  const [g] = groupFindings(same);
  assert.equal(g!.count, 2);
  assert.equal(g!.leakedBytes, 4096);
  assert.match(describeGroup(g!), /^Leaked 4,096 bytes in 2 allocations, allocated at main \(0x8ce2\) in cases: nothing freed them/);

  const write = findings('memcheck', 'memcheck-oob.xml')[0]!;
  const warning: SanitizerFinding = { ...write, severity: 'warning', text: 'A warning', where: { ...write.where!, line: 99 } };
  const sorted = groupFindings([warning, warning, warning, leak, write, write]);
  assert.deepEqual(
    sorted.map((s) => [s.severity, s.count, s.kind]),
    [
      ['error', 2, 'memory-access'],
      ['error', 1, 'leak'],
      ['warning', 3, 'memory-access'],
    ],
  );
});

test('racecheck: the Analysis record is one group of 512 hazards; 100 Hazard records are one group of both lines', () => {
  const [analysis] = groupFindings(findings('racecheck', 'racecheck-race.xml'));
  assert.equal(analysis!.hazards, 512);
  assert.equal(
    describeGroup(analysis!),
    'Race (WAR, a write after a read) in reduceWithoutSync between the read at sanitizer_cases.cu:19 and the write at sanitizer_cases.cu:17 — 512 hazards. A __syncthreads() between the two accesses orders them.',
  );
  const all = parseSanitizerText(read('racecheck-race-report-all.txt'));
  const groups = groupFindings(findings('racecheck', 'racecheck-race-report-all.xml'));
  assert.equal(groups.length, 1);
  const g = groups[0]!;
  assert.equal(g.count, 100);
  assert.equal(g.hazards, 100);
  assert.deepEqual(g.threads, { min: { x: 32, y: 0, z: 0 }, max: { x: 56, y: 0, z: 0 } });
  assert.match(g.key, /:19\|Write\|.*:17$/, "both sides' lines are in the key");
  assert.match(describeGroup(g, all.summary), /— at least 100 hazards; the first access by threads \(32–56,0,0\) in block \(0,0,0\)/);
  assert.deepEqual(g.userFrame?.func, 'main', 'the host stub named reduceWithoutSync is skipped');

  // The same two lines the other way round are another race.
  const swapped: SanitizerFinding = { ...g.example, race: { ...g.example.race!, first: g.example.race!.second, second: g.example.race!.first } };
  assert.equal(groupFindings([g.example, swapped]).length, 2);
});

test('synccheck: 32 divergent-barrier findings are one group; initcheck: 32 uninitialised reads are one', () => {
  const [sync, ...none] = groupFindings(findings('synccheck', 'synccheck-sync.xml'));
  assert.equal(none.length, 0);
  assert.equal(sync!.count, 32);
  assert.deepEqual(sync!.threads, { min: { x: 0, y: 0, z: 0 }, max: { x: 62, y: 0, z: 0 } });
  assert.match(
    describeGroup(sync!),
    /^Barrier error: Divergent thread\(s\) in warp in divergentBarrier at sanitizer_cases.cu:30 — 32 threads \(0–62,0,0\) in block \(0,0,0\)\./,
  );

  const [init, ...rest] = groupFindings(findings('initcheck', 'initcheck-uninit.xml'));
  assert.equal(rest.length, 0);
  assert.equal(init!.count, 32);
  assert.match(
    describeGroup(init!),
    /^Read of 4 bytes of uninitialised global memory in readUninitialised at sanitizer_cases.cu:23 — 32 threads \(0–31,0,0\) in block \(0,0,0\)\./,
  );
});

/** Host frames as the text prints them (`Host Frame: FUNC [PC] in MODULE`), for stacks recorded only as text. */
const textFrames = (text: string): HostFrame[] =>
  [...text.matchAll(/^=+ +Host Frame: (.*?) \[(0x[0-9a-f]+)\] in (\S+)$/gm)].map((m) => ({ func: m[1]!, pc: m[2]!, module: m[3]!, file: null, line: null }));

test("the workbench's own runner (node, v8, Napi, gpu_workbench_native.node, libcuda) is never the user's frame", () => {
  const frames = textFrames(read('gallery-null-pointer-broken.txt')).slice(0, 10);
  assert.equal(frames.length, 10);
  assert.deepEqual([...new Set(frames.map((f) => f.module))], ['libcuda.so.1', 'gpu_workbench_native.node', 'node']);
  const write = findings('memcheck', 'memcheck-oob.xml')[0]!;
  assert.equal(userFrame({ ...write, hostStack: frames }), null);
  // Under a Python program that called into CuPy, the Python line is the one.
  const python: HostFrame[] = [
    ...frames.slice(0, 1),
    {
      func: 'cupy.cuda.function.Function.__call__',
      module: '/usr/lib/python3/site-packages/cupy/cuda/function.cpython-312-x86_64-linux-gnu.so',
      pc: '0x1',
      file: null,
      line: null,
    },
    { func: '_PyEval_EvalFrameDefault', module: '/usr/bin/python3.12', pc: '0x2', file: null, line: null },
    { func: 'PyObject_Call', module: '/usr/lib/libpython3.12.so.1.0', pc: '0x3', file: null, line: null },
    { func: 'run', module: null, pc: null, file: '/home/me/kernels/run.py', line: 42 },
    { func: '<module>', module: null, pc: null, file: '/home/me/kernels/main.py', line: 7 },
  ];
  assert.equal(userFrame({ ...write, hostStack: python })?.file, '/home/me/kernels/run.py');
  // A frame with a file and line wins over a named one nearer the top.
  const mixed: HostFrame[] = [{ func: 'launch_my_kernel', module: '/home/me/libmine.so', pc: '0x10', file: null, line: null }, ...python.slice(4)];
  assert.equal(userFrame({ ...write, hostStack: mixed })?.line, 42);
  assert.equal(userFrame({ ...write, hostStack: mixed.slice(0, 1) })?.func, 'launch_my_kernel');
});

test('100,000 findings from many blocks and two lines group into two groups with the right ranges', () => {
  const write = findings('memcheck', 'memcheck-null.xml')[0]!;
  const other = { ...write, where: { ...write.where!, line: 26 } };
  const many: SanitizerFinding[] = [];
  for (let i = 0; i < 100_000; i++) {
    const base = i % 10 === 0 ? other : write;
    many.push({
      ...base,
      thread: { x: i % 256, y: (i >> 8) % 2, z: 0 },
      block: { x: i % 391, y: 0, z: i % 3 },
      access: { ...base.access!, address: `0x${(i * 4).toString(16)}` },
    });
  }
  const groups = groupFindings(many);
  assert.deepEqual(
    groups.map((g) => [g.where?.line, g.count]),
    [
      [25, 90_000],
      [26, 10_000],
    ],
  );
  assert.deepEqual(groups[0]!.threads, { min: { x: 0, y: 0, z: 0 }, max: { x: 255, y: 1, z: 0 } });
  assert.deepEqual(groups[0]!.blocks, { min: { x: 0, y: 0, z: 0 }, max: { x: 390, y: 0, z: 2 } });
  assert.match(describeGroup(groups[0]!), /90,000 threads \(0–255,0–1,0\) in blocks \(0–390,0,0–2\)/);
});

test('an API error a kernel fault leaves behind says so, whichever API named it (the driver’s, from the runner; the runtime’s, from a program)', () => {
  const text = readFileSync(join(ROOT, 'test/fixtures/sanitizer/h100/gallery-null-pointer-broken.txt'), 'utf8');
  const groups = groupFindings(parseSanitizerTextFindings('memcheck', text).findings);
  const api = groups.filter((g) => g.kind === 'api-error');
  assert.ok(api.length > 0);
  for (const g of api) assert.match(describeGroup(g), /what a kernel fault leaves behind/);
});
