import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { RunOutcome } from '../../main/services/run-service';
import { forkLauncher } from '../../main/process/launcher';
import { createWorkbench } from '../../main/workbench';
import { planFromArgs } from '../../core/plan/arg-syntax';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseJson, runCli, SAMPLES } from '../helpers/cli';
import { nullPointerPlan } from '../helpers/plans';
import { renderRun } from '../../main/cli/render-run';

const vecAdd = join(SAMPLES, 'vector-add/vector_add.cu');
/** Outcomes the no-GPU tests re-diagnose, written where the GPU suite collects its fixtures. */
function record(name: string, outcome: RunOutcome): void {
  const out = process.env['GPU_WORKBENCH_FIXTURES_OUT'];
  if (!out) return;
  mkdirSync(join(out, 'checks'), { recursive: true });
  writeFileSync(join(out, 'checks', `${name}.json`), JSON.stringify(outcome, null, 2));
}
const source = (path: string) => readFileSync(join(SAMPLES, path), 'utf8');

/** `gpu-workbench run` of vecAdd over 1000 elements, c never uploaded: the grid and b's initializer vary. */
const vecAddRun = (grid: number, b: string) => [
  'run',
  vecAdd,
  '--kernel',
  'vecAdd',
  '--grid',
  String(grid),
  '--block',
  '256',
  '--arg',
  'a:f32[1000]=iota',
  '--arg',
  `b:f32[1000]=${b}`,
  '--arg',
  'c:f32[1000]',
  '--arg',
  'n:i32=1000',
];

test('run: vector add from flags gives c[i] = 3i for every element, with the kernel time', async () => {
  const r = await runCli([...vecAddRun(4, 'iota(0,2)'), '--json']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const outcome = parseJson<RunOutcome>(r);
  assert.equal(outcome.status, 'ok');
  const c = outcome.result!.buffers.find((b) => b.name === 'c')!;
  assert.deepEqual(
    c.values,
    Array.from({ length: 1000 }, (_, i) => 3 * i),
  );
  assert.ok(outcome.result!.launches[0]!.medianMs > 0);
  assert.ok(outcome.result!.functions[0]!.attributes.numRegs > 0);
  console.log(
    `# vecAdd n=1000: ${outcome.result!.launches[0]!.medianMs.toFixed(4)} ms, ${outcome.result!.functions[0]!.attributes.numRegs} registers, compiled by ${outcome.compile[0]!.backend} in ${outcome.compile[0]!.ms.toFixed(0)} ms`,
  );
});

test('run: a plan file with 20 timed repeats reports min/median/max and exact results', async () => {
  const r = await runCli(['run', '--plan', join(SAMPLES, 'vector-add/plan.json'), '--json']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const outcome = parseJson<RunOutcome>(r);
  const launch = outcome.result!.launches[0]!;
  assert.equal(launch.timesMs.length, 20);
  assert.ok(launch.minMs <= launch.medianMs && launch.medianMs <= launch.maxMs);
  const c = outcome.result!.buffers.find((b) => b.name === 'c')!;
  assert.equal(c.count, 1_000_000);
  assert.equal(c.head[5], 15);
  assert.equal(c.tail[c.tail.length - 1], 3 * 999_999);
  assert.equal(c.mean, (3 * 999_999) / 2);
  assert.deepEqual(outcome.result!.leaks, []);
  console.log(`# vecAdd n=1e6: median ${launch.medianMs.toFixed(4)} ms (min ${launch.minMs.toFixed(4)}, max ${launch.maxMs.toFixed(4)})`);
});

test('run: an unknown kernel name is refused with the names the source does define', async () => {
  const r = await runCli(['run', vecAdd, '--kernel', 'vecAd', '--arg', 'n:i32=1']);
  assert.equal(r.code, 64);
  assert.match(r.stdout, /No kernel named "vecAd"/);
  assert.match(r.stdout, /The kernels in it are: vecAdd\(const float\*, const float\*, float\*, int\)/);
  assert.doesNotMatch(r.stdout + r.stderr, /at .*\.js:\d+/);
});

test('run: a plan that leaks reports the leak at teardown', async () => {
  const plan = planFromArgs({
    source: source('vector-add/vector_add.cu'),
    sourceName: 'vector_add.cu',
    kernel: 'vecAdd',
    grid: [1, 1, 1],
    block: [32, 1, 1],
    sharedBytes: 0,
    args: [],
  });
  const workbench = createWorkbench(forkLauncher, { warmSpare: false });
  try {
    const outcome = await workbench.runPlan(
      {
        ...plan,
        buffers: [{ name: 'keep', type: 'f32', count: 1024 }],
        steps: [{ op: 'alloc', buffer: 'keep' }],
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(outcome.status, 'ok');
    assert.deepEqual(outcome.result!.leaks, [{ name: 'keep', bytes: 4096 }]);
  } finally {
    await workbench.dispose();
  }
});

const workbench = createWorkbench(forkLauncher);
after(() => workbench.dispose());

const vecAddPlan = () =>
  planFromArgs({
    source: source('vector-add/vector_add.cu'),
    sourceName: 'vector_add.cu',
    kernel: 'vecAdd',
    grid: [4, 1, 1],
    block: [256, 1, 1],
    sharedBytes: 0,
    args: [
      { kind: 'buffer', buffer: { name: 'a', type: 'f32', count: 1000, init: { kind: 'iota', start: 0, step: 1 } } },
      { kind: 'buffer', buffer: { name: 'b', type: 'f32', count: 1000, init: { kind: 'constant', value: 1 } } },
      { kind: 'buffer', buffer: { name: 'c', type: 'f32', count: 1000, init: { kind: 'zeros' } } },
      { kind: 'scalar', name: 'n', type: 'i32', value: 1000 },
    ],
  });

/** A kernel that never finishes: a spin-wait on a flag nothing sets. */
const spinPlan = () =>
  planFromArgs({
    source: source('infinite-loop/broken.cu'),
    sourceName: 'broken.cu',
    kernel: 'spinForever',
    grid: [1, 1, 1],
    block: [1, 1, 1],
    sharedBytes: 0,
    args: [{ kind: 'buffer', buffer: { name: 'flag', type: 'i32', count: 1, init: { kind: 'zeros' } } }],
  });

async function assertVecAddOk(): Promise<RunOutcome> {
  const outcome = await workbench.runPlan(vecAddPlan(), { timeoutMs: 30_000 });
  assert.equal(outcome.status, 'ok', outcome.diagnosis.headline);
  assert.equal(outcome.result!.buffers.find((b) => b.name === 'c')!.values![999], 1000);
  return outcome;
}

test('lifecycle: a null-pointer write (700) is diagnosed, the runner replaced, and the next run succeeds at once', async () => {
  const first = await assertVecAddOk();
  const plan = nullPointerPlan(source('null-pointer/kernel.cu'));
  for (let round = 0; round < 3; round++) {
    const fault = await workbench.runPlan(plan, { timeoutMs: 30_000 });
    assert.equal(fault.status, 'cuda-error');
    const f = fault.result!.failure!;
    assert.equal(f.error.name, 'CUDA_ERROR_ILLEGAL_ADDRESS');
    assert.equal(f.error.code, 700);
    assert.equal(f.error.api, 'cuCtxSynchronize');
    assert.equal(f.op, 'launch');
    assert.equal(f.kernel, 'main');
    assert.equal(f.sticky, true);
    const faulted = performance.now();
    const next = await assertVecAddOk();
    const recoveryMs = performance.now() - faulted;
    assert.notEqual(next.result!.runnerPid, fault.result!.runnerPid);
    console.log(
      `# round ${round}: fault in pid ${fault.result!.runnerPid}, next success in pid ${next.result!.runnerPid} after ${recoveryMs.toFixed(0)} ms (incl. compile)`,
    );
  }
  assert.ok(first.result!.runnerPid > 0);
});

test('lifecycle: a kernel that never ends is killed by the watchdog, and the next run succeeds', async () => {
  const plan = spinPlan();
  const started = performance.now();
  const outcome = await workbench.runPlan(plan, { timeoutMs: 3000 });
  assert.equal(outcome.status, 'runner-died');
  assert.equal(outcome.exit?.kind, 'watchdog');
  assert.match(outcome.diagnosis.specifics.join(' '), /did not answer within 3000 ms/);
  console.log(`# watchdog fired after ${(performance.now() - started).toFixed(0)} ms`);
  await assertVecAddOk();
});

test('lifecycle: killing the runner mid-job is reported, and the next run succeeds', async () => {
  const plan = spinPlan();
  const running = workbench.runPlan(plan, { timeoutMs: 60_000 });
  let pid: number | undefined;
  for (let i = 0; i < 200 && !pid; i++) {
    await new Promise((r) => setTimeout(r, 50));
    pid = workbench.pool.status().runners.find((r) => r.role === 'active' && r.busy)?.pid;
  }
  assert.ok(pid, 'a busy runner');
  await new Promise((r) => setTimeout(r, 500));
  process.kill(pid, 'SIGKILL');
  const outcome = await running;
  assert.equal(outcome.status, 'runner-died');
  assert.equal(outcome.exit?.kind, 'killed');
  assert.match(outcome.diagnosis.specifics.join(' '), /SIGKILL/);
  await assertVecAddOk();
});

test('NVML shows the runner holding the device, with its memory', async () => {
  const { runner, status } = await workbench.pool.acquire(0);
  assert.ok(status.contextReady);
  const { listDevices } = await import('../../main/services/device-service');
  const devices = await listDevices();
  assert.ok(devices.ok);
  const processes = devices.memory?.[0]?.processes ?? [];
  const mine = processes.find((p) => p.pid === runner.pid);
  console.log(`# NVML processes: ${processes.map((p) => `${p.pid} ${p.name} ${p.usedBytes}`).join('; ')}`);
  assert.ok(mine, `runner pid ${runner.pid} in ${JSON.stringify(processes)}`);
  assert.ok((mine.usedBytes ?? 0) > 0);
});

test('device printf is captured under the launch that printed it, and the next run starts clean', async () => {
  const hello = [
    '#ifndef __CUDACC_RTC__',
    '#include <cstdio>',
    '#endif',
    'extern "C" __global__ void hello(int n) {',
    '  if (threadIdx.x == 0) printf("hello from block %d of %d\\n", blockIdx.x, n);',
    '}',
  ].join('\n');
  const plan = planFromArgs({
    source: hello,
    sourceName: 'hello.cu',
    kernel: 'hello',
    grid: [2, 1, 1],
    block: [32, 1, 1],
    sharedBytes: 0,
    args: [{ kind: 'scalar', name: 'n', type: 'i32', value: 2 }],
  });
  const outcome = await workbench.runPlan(plan, { timeoutMs: 30_000 });
  assert.equal(outcome.status, 'ok', outcome.diagnosis.headline);
  const launchStep = outcome.result!.steps.findIndex((s) => s.op === 'launch');
  const output = outcome.result!.deviceOutput ?? [];
  assert.equal(output.length, 1, JSON.stringify(output));
  assert.equal(output[0]!.stepIndex, launchStep);
  assert.deepEqual(output[0]!.text.trim().split('\n').sort(), ['hello from block 0 of 2', 'hello from block 1 of 2']);
  assert.match(renderRun(outcome), /Device output after step \d+:\n {2}\| hello from block/);

  const next = await assertVecAddOk();
  assert.deepEqual(next.result!.deviceOutput, [], 'nothing of the previous run is left over');
});

test('run: a buffer given no initializer is never uploaded, and a kernel that reads it is diagnosed with no expectation given', async () => {
  const broken = join(SAMPLES, 'uninitialised-read/broken.cu');
  const args = ['--kernel', 'accumulate', '--grid', '16', '--block', '256', '--arg', 'in:f32[4096]=iota', '--arg', 'out:f32[4096]', '--arg', 'n:i32=4096'];
  const r = await runCli(['run', broken, ...args, '--json']);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  record('uninitialised-no-expectation', parseJson<RunOutcome>(r));
  const d = parseJson<RunOutcome>(r).diagnosis;
  assert.equal(d.kind, 'uninitialised-read');
  assert.equal(d.buffer, 'out');
  assert.equal(d.kernel?.entry, 'accumulate');
  assert.match(d.headline, /memory nothing had written.* the first at index 0/);
  assert.match(d.headline + d.specifics.join(' '), /4096/);
  assert.equal(d.sanitizer?.tool, 'initcheck');
  const text = await runCli(['run', broken, ...args]);
  assert.match(text.stdout, /compute-sanitizer --tool initcheck/);
  console.log(`# ${d.headline}`);
  // Zeros only when asked: =0 makes the same kernel correct.
  const zeroed = await runCli(['run', broken, ...args.map((a) => (a === 'out:f32[4096]' ? 'out:f32[4096]=0' : a)), '--json']);
  assert.equal(zeroed.code, 0, zeroed.stdout);
  assert.equal(parseJson<RunOutcome>(zeroed).diagnosis.kind, 'ok');
});

test('run: elements no thread wrote are found by their poison, with the count and the first index', async () => {
  const r = await runCli([...vecAddRun(2, '1'), '--json']);
  assert.equal(r.code, 1, r.stdout);
  const outcome = parseJson<RunOutcome>(r);
  record('unwritten-elements', outcome);
  assert.equal(outcome.diagnosis.kind, 'uninitialised-read');
  assert.equal(outcome.diagnosis.buffer, 'c');
  const c = outcome.result!.buffers.find((b) => b.name === 'c')!;
  assert.equal(c.poison?.poisonCount, 488);
  assert.equal(c.poison?.firstPoisonIndex, 512);
  assert.match(outcome.diagnosis.specifics.join(' '), /488 of 1,000 elements of c still hold the poison pattern .* the first at index 512/);
});

test('run: steps print in plan order, and the determinism check can be turned off or asked for more runs', async () => {
  const base = vecAddRun(4, '1');
  const text = await runCli(base);
  assert.equal(text.code, 0, text.stdout);
  const numbers = [...text.stdout.matchAll(/^Step (\d+):/gm)].map((m) => Number(m[1]));
  assert.deepEqual(
    numbers,
    [...numbers].sort((x, y) => x - y),
  );
  assert.ok(numbers.length >= 9, text.stdout);
  assert.match(text.stdout, /Determinism: a second run gave bit-identical read-backs/);
  assert.match(text.stdout, /a second run gave bit-identical results/);
  const off = parseJson<RunOutcome>(await runCli([...base, '--no-determinism-check', '--json']));
  assert.equal(off.result!.checks.determinism?.status, 'off');
  assert.match(off.diagnosis.specifics.join(' '), /Not compared with a second run: turned off/);
  const three = parseJson<RunOutcome>(await runCli([...base, '--determinism-runs', '3', '--json']));
  assert.equal(three.result!.checks.determinism?.runs, 3);
  assert.equal(three.result!.checks.determinism?.differences.length, 0);
});

test('run: floating-point atomics that change the last bits are reported as expected, not as a race', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wb-atomics-'));
  const file = join(dir, 'sum.cu');
  writeFileSync(
    file,
    `__global__ void sum(const float* x, float* total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(total, x[i]);
}
`,
  );
  const r = await runCli([
    'run',
    file,
    '--kernel',
    'sum',
    '--grid',
    '4096',
    '--block',
    '256',
    '--arg',
    'x:f32[1048576]=rand(3,0,1000)',
    '--arg',
    'total:f32[1]=0',
    '--arg',
    'n:i32=1048576',
    '--determinism-runs',
    '4',
    '--json',
  ]);
  const outcome = parseJson<RunOutcome>(r);
  record('float-atomics', outcome);
  const d = outcome.diagnosis;
  console.log(`# float atomics: ${outcome.result?.checks.determinism?.differences.length} differing read-backs in 4 more runs; ${d.kind}: ${d.headline}`);
  // A million float atomics from 4,096 blocks into one sum: their order, and so the last bits, change run to run.
  assert.equal(d.kind, 'nondeterministic', d.headline);
  assert.equal(d.severity, 'warning');
  assert.match(d.specifics.join(' '), /atomic additions \(sum\.cu:3\) on a floating-point buffer/);
  assert.equal(d.sanitizer, null);
});

test('run: NaN a kernel computes (sqrt of a negative) is not blamed on the poison: the probe with zeroed memory says so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wb-sqrt-'));
  const file = join(dir, 'root.cu');
  writeFileSync(
    file,
    `__global__ void root(const float* in, float* out, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) out[i] = sqrtf(in[i]);\n}\n`,
  );
  const r = await runCli([
    'run',
    file,
    '--kernel',
    'root',
    '--grid',
    '4',
    '--block',
    '256',
    '--arg',
    'in:f32[1024]=iota(-8,1)',
    '--arg',
    'out:f32[1024]',
    '--arg',
    'n:i32=1024',
    '--json',
  ]);
  const outcome = parseJson<RunOutcome>(r);
  record('legit-nan', outcome);
  assert.equal(outcome.diagnosis.kind, 'ok', outcome.diagnosis.headline);
  assert.equal(outcome.result?.checks.poisonProbe?.status, 'ran');
  assert.match(outcome.diagnosis.specifics.join(' '), /Buffer out holds 8 NaN values\./);
});
