import assert from 'node:assert/strict';
import { test } from 'node:test';

import { launchPlanSchema, type LaunchPlanInput } from '../../core/plan/plan-schema';
import type { CompiledModule } from '../../core/runner/protocol';
import { HOST_PROGRAM_CHECKS } from '../../core/runner/run-choice';
import type { CudaErrorInfo } from '../../core/runner/run-result';
import { executePlan } from '../../main/runner/plan-executor';
import { chooseRunChecks } from '../../main/runner/run/choose-checks';
import { PlanRun } from '../../main/runner/run/plan-run';
import type { RunCheck } from '../../main/runner/run/run-check';
import { RecordedDevice } from '../../main/runner/run/recorded-device';
import { StepFailure } from '../../main/runner/run/step-failure';
import { RunEventRecorder } from '../../core/runner/event-recorder';
import { fakeAttributes, pointerArg, recordingAddon, type FakeKernel, type FakeScript } from '../helpers/recording-addon';

// The run object's orchestration: which driver calls a plan's run makes, in which order, and where its checks'
// hooks come. The addon is a recording stand-in (test/helpers/recording-addon.ts); test/gpu runs these paths for real.

const floats = (d: Uint8Array) => new Float32Array(d.buffer.slice(d.byteOffset, d.byteOffset + d.byteLength));
const count = (arg: Uint8Array) => new DataView(arg.buffer, arg.byteOffset, 4).getInt32(0, true);

const kernels = new Map<number, FakeKernel>([
  [1, (m, [a, b, n]) => m.write(pointerArg(b!), new Uint8Array(floats(m.read(pointerArg(a!), 4 * count(n!))).map((v) => v * 2).buffer))],
  [
    2, // one element past the end
    (m, [b, n]) => m.write(pointerArg(b!) + BigInt(4 * count(n!)), new Uint8Array(4).fill(1)),
  ],
  [
    3, // NaN from NaN, as a kernel reading poison would make it (not the pattern itself)
    (m, [a, b, n]) => {
      const out = new DataView(new ArrayBuffer(4 * count(n!)));
      floats(m.read(pointerArg(a!), 4 * count(n!))).forEach((v, i) =>
        out.setUint32(4 * i, Number.isNaN(v) ? 0x7fc00000 : new Uint32Array(new Float32Array([v + 1]).buffer)[0]!, true),
      );
      m.write(pointerArg(b!), new Uint8Array(out.buffer));
    },
  ],
]);
const ids: Record<string, number> = { scale: 1, overrun: 2, addOne: 3 };

const steps: LaunchPlanInput['steps'] = [
  { op: 'alloc', buffer: 'a' },
  { op: 'alloc', buffer: 'b' },
  { op: 'upload', buffer: 'a' },
  { op: 'launch', kernel: 'k', grid: [1, 1, 1], block: [16, 1, 1], args: [{ buffer: 'a' }, { buffer: 'b' }, { scalar: { type: 'i32', value: 16 } }] },
  { op: 'sync' },
  { op: 'download', buffer: 'b' },
  { op: 'free', buffer: 'a' },
  { op: 'free', buffer: 'b' },
];

const plan = (entry: string, over: Partial<LaunchPlanInput> = {}) =>
  launchPlanSchema.parse({
    version: 1,
    kernels: [{ id: 'k', entry, source: `extern "C" __global__ void ${entry}() {}` }],
    buffers: [
      { name: 'a', type: 'f32', count: 16, init: { kind: 'iota' } },
      { name: 'b', type: 'f32', count: 16 },
    ],
    steps,
    ...over,
  });

function setup(entry: string, script: Omit<FakeScript, 'kernels'> = {}) {
  const { addon, calls } = recordingAddon({ kernels, ...script });
  const modules: CompiledModule[] = [{ kernel: 'k', symbol: entry, image: new Uint8Array([1]) }];
  const options = {
    modules,
    device: { ordinal: 0, name: 'stand-in' },
    loadFunction: async () => ({ fn: { id: ids[entry]!, attributes: fakeAttributes(48 * 1024) }, loaded: true }),
    runId: 'r1',
    timeLimitMs: null,
  };
  return { addon, calls, options };
}

async function run(entry: string, over: Partial<LaunchPlanInput> = {}, script: Omit<FakeScript, 'kernels'> = {}) {
  const { addon, calls, options } = setup(entry, script);
  const { result } = await executePlan(addon, plan(entry, over), options.modules, options.device, options.loadFunction, options.runId);
  return { result, calls, methods: calls.map((c) => c.slice(0, c.indexOf('('))) };
}

test('the default checks: buffers allocated with guards (poisoned unless uploaded first), guards read after the launch, one replay before the trailing frees', async () => {
  const { result, calls, methods } = await run('scale');
  assert.deepEqual(methods, [
    'markTimeOrigin',
    'captureOutputStart',
    'memAllocGuarded',
    'memAllocGuarded',
    'memcpyHtoD',
    'launch',
    'memcpyDtoHRegions',
    'synchronize',
    'memcpyDtoH',
    // the determinism replay: b poisoned again, a uploaded again, the launch, the read-back compared
    'memsetD8',
    'memcpyHtoD',
    'launch',
    'synchronize',
    'memcpyDtoH',
    'memFree',
    'memFree',
  ]);
  assert.deepEqual(calls.slice(2, 4), ['memAllocGuarded(64, 256, 165, -1)', 'memAllocGuarded(64, 256, 165, 255)']);
  assert.match(calls[9]!, /^memsetD8\(0x[0-9a-f]+, 255, 64\)$/);
  assert.equal(result.ok, true);
  assert.equal(result.checks.determinism?.status, 'compared');
  assert.deepEqual(result.checks.uninitialised, [{ stepIndex: 3, kernel: 'k', buffer: 'b' }]);
  assert.deepEqual(
    result.events!.map((e) => e.phase).filter((p, i, all) => p !== all[i - 1]),
    ['load', 'run', 'determinism', 'run'],
    'the replay has its own phase; the trailing frees are the first run’s',
  );
});

test('the host program’s checks (a run under compute-sanitizer): each step makes its one driver call, once — no guard, no fill, no replay', async () => {
  const { result, calls, methods } = await run('scale', { checks: HOST_PROGRAM_CHECKS }, { capture: true });
  assert.deepEqual(
    methods.filter((m) => !m.startsWith('captureOutput')),
    ['markTimeOrigin', 'memAllocGuarded', 'memAllocGuarded', 'memcpyHtoD', 'launch', 'synchronize', 'memcpyDtoH', 'memFree', 'memFree'],
  );
  assert.deepEqual(calls.slice(2, 4), ['memAllocGuarded(64, 0, 165, -1)', 'memAllocGuarded(64, 0, 165, -1)'], 'buffers of exactly their size, unfilled');
  assert.equal(result.checks.determinism?.status, 'off');
  assert.equal(result.checks.poisonProbe, undefined);
  assert.ok(
    result.events!.every((e) => e.phase === 'run' || e.phase === 'load'),
    'no replay phase, no teardown',
  );
  // What still means something there is kept: the plan's memory for naming addresses, uninitialised uses, device output.
  assert.deepEqual(
    result.memory!.map((m) => [m.buffer, m.allocatedAtStep, m.freedAtStep]),
    [
      ['a', 0, 6],
      ['b', 1, 7],
    ],
  );
  assert.equal(result.checks.uninitialised.length, 1);
  assert.equal(methods.at(-1), 'captureOutputStop');
});

test('a write past the end is found in the guards after the launch, and the pattern restored before the next call', async () => {
  const { result, calls, methods } = await run('overrun', {
    checks: { guardBytes: 256, poison: true, determinismRuns: 0 },
    steps: [
      { op: 'alloc', buffer: 'b' },
      { op: 'launch', kernel: 'k', grid: [1, 1, 1], block: [16, 1, 1], args: [{ buffer: 'b' }, { scalar: { type: 'i32', value: 16 } }] },
      { op: 'sync' },
      { op: 'free', buffer: 'b' },
    ],
  });
  assert.deepEqual(methods, ['markTimeOrigin', 'captureOutputStart', 'memAllocGuarded', 'launch', 'memcpyDtoHRegions', 'memsetD8', 'synchronize', 'memFree']);
  assert.match(calls[5]!, /^memsetD8\(0x[0-9a-f]+, 165, 256\)$/);
  assert.deepEqual(
    result.checks.guardViolations.map((v) => [v.stepIndex, v.buffer, v.damage.side]),
    [[1, 'b', 'after']],
  );
});

test('NaN from memory nothing wrote: the probe replays the launches with it zeroed, after the determinism replay', async () => {
  const { result, methods } = await run('addOne', {
    buffers: [
      { name: 'a', type: 'f32', count: 16 },
      { name: 'b', type: 'f32', count: 16 },
    ],
    steps: steps.filter((s) => s.op !== 'upload'),
  });
  const phases = result.events!.map((e) => `${e.phase}:${e.kind}${e.kind === 'memset' ? `:${e.why}` : ''}`);
  assert.deepEqual(phases.slice(phases.indexOf('determinism:memset:poison')), [
    'determinism:memset:poison',
    'determinism:memset:poison',
    'determinism:launch',
    'determinism:sync',
    'determinism:copy',
    'probe:memset:zero',
    'probe:memset:zero',
    'probe:launch',
    'probe:sync',
    'probe:copy',
    'run:free',
    'run:free',
  ]);
  assert.equal(methods.filter((m) => m === 'launch').length, 3);
  assert.equal(result.checks.poisonProbe?.status, 'ran');
  assert.deepEqual(
    result.checks.poisonProbe?.buffers.map((b) => [b.buffer, b.nanInFirst, b.nanWithZeros]),
    [['b', 16, 0]],
  );
});

const invalid: CudaErrorInfo = { library: 'cuda', api: 'cuLaunchKernel', code: 1, name: 'CUDA_ERROR_INVALID_VALUE', message: 'invalid' };
const illegal: CudaErrorInfo = { library: 'cuda', api: 'cuLaunchKernel', code: 700, name: 'CUDA_ERROR_ILLEGAL_ADDRESS', message: 'illegal address' };

test('a fault in the determinism replay is the run’s, flagged so; the frees after it still run when the context lives', async () => {
  const { result, methods } = await run('scale', {}, { failures: [{ method: 'launch', nth: 2, error: invalid }] });
  assert.equal(result.ok, false);
  assert.equal(result.failure?.duringDeterminismRun, true);
  assert.equal(result.failure?.stepIndex, 3);
  assert.deepEqual(methods.slice(-2), ['memFree', 'memFree'], 'teardown frees what the plan never reached');
  assert.equal(result.steps.length, 6, 'the first run’s steps up to the replay point');
});

test('a sticky fault ends the run at its step: no replay, no teardown (the context is gone), device output still taken', async () => {
  const { result, methods } = await run('scale', {}, { capture: true, failures: [{ method: 'launch', nth: 1, error: illegal }] });
  assert.equal(result.failure?.sticky, true);
  assert.deepEqual(methods.slice(-4), ['launch', 'captureOutputTake', 'captureOutputTake', 'captureOutputStop']);
  assert.equal(result.checks.determinism?.reason, 'the run failed before the check');
  assert.deepEqual(result.leaks, [], 'a run that stopped early never reached its frees: no leak');
});

test('the checks’ hooks come at their points of the run, in order', async () => {
  const hooks: string[] = [];
  const recorder: RunCheck = {
    start: () => void hooks.push('start'),
    allocLayout: (i) => (hooks.push(`allocLayout ${i}`), {}),
    afterAlloc: (b) => void hooks.push(`afterAlloc ${b}`),
    afterUpload: (b) => void hooks.push(`afterUpload ${b}`),
    pointerArg: (i, _k, b, freed) => void hooks.push(`pointerArg ${i} ${b}${freed === null ? '' : ' stale'}`),
    afterLaunch: (l) => void hooks.push(`afterLaunch ${l.stepIndex}`),
    summary: (spec, _d, s) => (hooks.push(`summary ${spec.name}`), s),
    afterDownload: (i) => void hooks.push(`afterDownload ${i}`),
    afterStep: (i, _s, failed) => void hooks.push(`afterStep ${i}${failed ? ' failed' : ''}`),
    atReplayPoint: async () => void hooks.push('atReplayPoint'),
    afterReplay: (f) => void hooks.push(`afterReplay ${f ? 'failed' : 'ok'}`),
    end: () => void hooks.push('end'),
  };
  const { addon, options } = setup('scale');
  await new PlanRun(addon, plan('scale'), options, (context) => chooseRunChecks(context).add(recorder)).execute();
  assert.deepEqual(hooks, [
    'start',
    'allocLayout 0',
    'afterAlloc a',
    'afterStep 0',
    'allocLayout 1',
    'afterAlloc b',
    'afterStep 1',
    'afterUpload a',
    'afterStep 2',
    'pointerArg 3 a',
    'pointerArg 3 b',
    'afterLaunch 3',
    'afterStep 3',
    'afterStep 4',
    'summary b',
    'afterDownload 5',
    'afterStep 5',
    // the determinism check replays first (it was added before the recorder), telling every check when its pass is done
    'afterReplay ok',
    'atReplayPoint',
    'afterStep 6',
    'afterStep 7',
    'end',
  ]);
});

test('a read-back whose host memory cannot be made is the step’s failure in words, not the runner’s end', async () => {
  const { addon, calls } = recordingAddon({ kernels });
  const device = new RecordedDevice(addon, new RunEventRecorder(() => performance.now(), performance.now()));
  const huge = { base: 0x1000n, pointer: 0x1000n, address: '0x1000', bytes: 2 ** 52, guardBytes: 0, fill: -1 };
  await assert.rejects(
    device.download('c', huge),
    (e: unknown) =>
      e instanceof StepFailure &&
      e.error.api === 'cuMemcpyDtoH_v2' &&
      /^buffer "c" cannot be read back: this process cannot allocate 4,096 TiB of host memory for it$/.test(e.error.message),
  );
  assert.deepEqual(calls, [], 'no driver call was made');
});
