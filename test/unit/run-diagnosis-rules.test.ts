import assert from 'node:assert/strict';
import { test } from 'node:test';

import { launchPlanSchema } from '../../core/plan/plan-schema';
import { diagnoseRun, type DiagnosisInput } from '../../core/runner/diagnose';
import { RUN_RULES, runFacts, type RunFinding } from '../../core/runner/diagnosis-rules';
import { describeRun, STICKY_SENTENCE } from '../../core/runner/diagnosis-sentences';
import type { CudaErrorInfo, GuardViolation, RunChecksReport, RunFailure, RunResult } from '../../core/runner/run-result';
import type { Finding } from '../../core/validate/validate-launch';

// Each rule of the run diagnosis alone: the facts it fires on, the nearest facts it does not, and what its finding
// says. The recorded GPU runs (test/integration/gallery-fixtures.test.ts) check the whole table end to end.

const PLAN = launchPlanSchema.parse({
  version: 1,
  kernels: [{ id: 'add', entry: 'vecAdd', source: '__global__ void vecAdd(float *c, int n) { atomicAdd(c, 1.0f); }', sourceName: 'add.cu' }],
  buffers: [{ name: 'c', type: 'f32', count: 8 }],
  steps: [
    { op: 'alloc', buffer: 'c' },
    { op: 'launch', kernel: 'add', grid: [1, 1, 1], block: [8, 1, 1], args: [{ buffer: 'c' }, { scalar: { type: 'i32', value: 8 } }] },
    { op: 'download', buffer: 'c', expect: { kind: 'iota' } },
    { op: 'free', buffer: 'c' },
  ],
});

const cudaError = (code: number, name: string, library = 'cuda'): CudaErrorInfo => ({ library, api: 'cuLaunchKernel', code, name, message: `${name} (test)` });

function runResult(checks: Partial<RunChecksReport> = {}, over: Partial<RunResult> = {}): RunResult {
  return {
    runId: 'r1',
    ok: true,
    executeMs: 1,
    checks: { guardBytes: 256, poison: true, guardViolations: [], staleUses: [], uninitialised: [], comparisons: [], ...checks },
    pageable: [],
    device: { ordinal: 0, name: 'GPU' },
    functions: [],
    steps: PLAN.steps.map((s, index) => ({ index, op: s.op, label: `${s.op} step`, ms: 0.1, wallMs: 0.1 })),
    launches: [],
    buffers: [{ name: 'c', type: 'f32', count: 8, min: 0, max: 7, mean: 3.5, nanCount: 0, infCount: 0, head: [], tail: [], values: null, poison: null }],
    leaks: [],
    failure: null,
    runnerPid: 4242,
    ...over,
  } as RunResult;
}

const failed = (failure: Partial<RunFailure> & { error: CudaErrorInfo }, checks: Partial<RunChecksReport> = {}, over: Partial<RunResult> = {}) =>
  runResult(checks, { ok: false, failure: { stepIndex: 1, op: 'launch', kernel: 'add', sticky: false, ...failure }, ...over });

const input = (over: Partial<DiagnosisInput> = {}): DiagnosisInput => ({
  status: 'ok',
  problem: null,
  result: runResult(),
  exit: null,
  plan: PLAN,
  launchFindings: [],
  processes: null,
  planPath: 'plan.json',
  ...over,
});

const rule = (id: RunFinding['kind']) => RUN_RULES.find((r) => r.id === id)!;
const judged = (id: RunFinding['kind'], over: Partial<DiagnosisInput>) => rule(id).judge(runFacts(input(over)));
const told = (id: RunFinding['kind'], over: Partial<DiagnosisInput>) => {
  const facts = runFacts(input(over));
  const finding = rule(id).judge(facts);
  assert.ok(finding, `${id} fires`);
  return describeRun(finding, facts);
};

test('the rules, in priority order: a run that never started, one that died, the failed call, then the checks', () => {
  assert.deepEqual(
    RUN_RULES.map((r) => r.id),
    [
      'could-not-start',
      'cancelled',
      'watchdog',
      'runner-crashed',
      'no-result',
      'out-of-memory',
      'invalid-launch-configuration',
      'module-load',
      'plan-error',
      'device-assert',
      'fault-on-freed-buffer',
      'cuda-error',
      'out-of-bounds-write',
      'use-after-free',
      'wrong-result-from-unwritten-memory',
      'wrong-result',
      'unwritten-memory-read-back',
      'nondeterministic',
      'leak',
      'ok',
    ],
  );
  assert.equal(new Set(RUN_RULES.map((r) => r.id)).size, RUN_RULES.length);
});

test('could-not-start: an invalid plan, a compile error or no driver, told as the check that stopped it found it', () => {
  for (const status of ['invalid', 'compile-error', 'unavailable'] as const)
    assert.deepEqual(judged('could-not-start', { status }), { kind: 'could-not-start', status });
  assert.equal(judged('could-not-start', { status: 'cuda-error' }), null);
  const d = told('could-not-start', { status: 'invalid', problem: { title: 'Bad plan', detail: 'one\n\ntwo', remedy: 'Fix it.' } });
  assert.deepEqual([d.kind, d.headline, d.specifics, d.next], ['invalid-plan', 'Bad plan', ['one', 'two'], ['Fix it.']]);
  assert.equal(told('could-not-start', { status: 'compile-error' }).headline, 'The run could not start');
});

test('cancelled: says how it was stopped, the exit when a runner was killed, else what a cancel stops', () => {
  assert.equal(judged('cancelled', { status: 'runner-died' }), null);
  const plain = told('cancelled', { status: 'cancelled', result: null });
  assert.deepEqual([plain.kind, plain.severity, plain.headline], ['cancelled', 'warning', 'The run was cancelled']);
  assert.deepEqual(plain.specifics, ['It was stopped where it was: a compile under way was stopped, a runner at work was killed.']);
  const killed = told('cancelled', { status: 'cancelled', exit: { kind: 'cancelled', summary: 'The runner was stopped at the caller’s request.' } });
  assert.deepEqual(killed.specifics, ['The runner was stopped at the caller’s request.']);
});

test('watchdog: a runner the watchdog stopped, naming the plan’s only launch', () => {
  const exit = { kind: 'watchdog' as const, summary: 'The runner did not answer within 3000 ms.' };
  assert.equal(judged('watchdog', { status: 'runner-died', exit: { kind: 'crashed', summary: 'SIGSEGV' } }), null);
  const d = told('watchdog', { status: 'runner-died', exit, result: null });
  assert.equal(d.headline, 'The run did not finish in time: vecAdd never returned; the watchdog stopped it');
  assert.deepEqual(d.step, { index: 1, label: 'launch vecAdd<<<1, 8>>>', op: 'launch' });
  assert.deepEqual(d.specifics, ['The runner did not answer within 3000 ms.']);
  const twoLaunches = { ...PLAN, steps: [...PLAN.steps, PLAN.steps[1]!] };
  assert.equal(told('watchdog', { status: 'runner-died', exit, plan: twoLaunches }).headline, 'The run did not finish in time; the watchdog stopped it');
});

test('runner-crashed: any other death of the runner, with its exit in words', () => {
  assert.equal(judged('runner-crashed', { status: 'cuda-error' }), null);
  const d = told('runner-crashed', { status: 'runner-died', exit: { kind: 'crashed', summary: 'It ended with SIGSEGV.' }, result: null });
  assert.deepEqual([d.kind, d.headline, d.specifics], ['runner-crashed', 'The runner process died during the run', ['It ended with SIGSEGV.']]);
});

test('no-result: a failure with nothing from the runner is named by the request that failed', () => {
  assert.equal(judged('no-result', {}), null);
  const d = told('no-result', { status: 'cuda-error', result: null, problem: { title: 'CUDA_ERROR_X in cuInit', detail: '', remedy: '' } });
  assert.deepEqual([d.kind, d.headline], ['cuda-error', 'CUDA_ERROR_X in cuInit']);
});

test('out-of-memory: an allocation that ran out, with the numbers and who else holds the device', () => {
  const oom = cudaError(2, 'CUDA_ERROR_OUT_OF_MEMORY');
  assert.equal(judged('out-of-memory', { result: failed({ op: 'launch', error: oom }) }), null, 'only an allocation');
  assert.equal(judged('out-of-memory', { result: failed({ op: 'alloc', error: cudaError(2, 'WORKBENCH_X', 'workbench') }) }), null, 'only CUDA’s');
  const memory = { requestedBytes: 2 ** 40, freeBytes: 2 ** 30, totalBytes: 80 * 2 ** 30 };
  const d = told('out-of-memory', {
    result: failed({ stepIndex: 0, op: 'alloc', error: oom, memory }),
    processes: [
      { pid: 4242, name: 'runner', usedBytes: 2 ** 20 },
      { pid: 7, name: 'python', usedBytes: 2 ** 30 },
      { pid: 8, name: '', usedBytes: 2 ** 31 },
    ],
    ownPids: [8],
  });
  assert.equal(d.headline, 'Out of device memory at step 1 (alloc step)');
  assert.deepEqual(d.specifics, [
    'Asked for 1 TiB; the device has 1 GiB free of 80 GiB — more than the whole device.',
    'Process 7 (python) holds 1 GiB on this device.',
    'Process 8 (a GPU Workbench runner (its CUDA context)) holds 2 GiB on this device.',
  ]);
  assert.match(d.next[0]!, /No device this size can hold it/);
});

test('invalid-launch-configuration: the validator’s errors for the failed launch, with their fixes', () => {
  const error = cudaError(701, 'CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES');
  assert.equal(judged('invalid-launch-configuration', { result: failed({ op: 'sync', error }) }), null, 'only a launch');
  assert.equal(judged('invalid-launch-configuration', { result: failed({ error: cudaError(700, 'CUDA_ERROR_ILLEGAL_ADDRESS') }) }), null);
  const finding = (message: string, severity: 'error' | 'warning'): Finding =>
    ({
      rule: 'r',
      severity,
      field: 'block',
      message,
      limit: null,
      value: null,
      driverError: null,
      runtimeError: null,
      fix: `${message}: fix`,
      suggested: null,
    }) as Finding;
  const launchFindings = [finding('too many registers', 'error'), finding('partial warp', 'warning')];
  const d = told('invalid-launch-configuration', { result: failed({ error }), launchFindings });
  assert.equal(d.headline, 'vecAdd could not be launched with this configuration: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES');
  assert.equal(d.specifics[0], 'too many registers');
  assert.deepEqual(d.next, ['too many registers: fix']);
  assert.equal(d.launchFindings, launchFindings);
});

test('module-load: the driver refused the compiled kernel', () => {
  const error = cudaError(209, 'CUDA_ERROR_NO_BINARY_FOR_GPU');
  assert.equal(judged('module-load', { result: failed({ error }) }), null);
  const d = told('module-load', { result: failed({ stepIndex: null, op: 'load', kernel: null, error }) });
  assert.equal(d.headline, 'The driver could not load the compiled kernel: CUDA_ERROR_NO_BINARY_FOR_GPU');
});

test('plan-error: the workbench’s own refusal of a step', () => {
  assert.equal(judged('plan-error', { result: failed({ error: cudaError(1, 'CUDA_ERROR_INVALID_VALUE') }) }), null);
  const d = told('plan-error', { result: failed({ op: 'upload', error: cudaError(-1, 'WORKBENCH_PLAN_ERROR', 'workbench') }) });
  assert.equal(d.headline, 'The plan cannot do step 2: WORKBENCH_PLAN_ERROR (test)');
});

test('device-assert: a failed assert the device printed is named by its line and its threads', () => {
  const error = cudaError(710, 'CUDA_ERROR_ASSERT');
  assert.equal(judged('device-assert', { result: failed({ error }) }), null, 'no printed assert: the plain error rule tells it');
  const deviceOutput = [
    { stepIndex: 1, text: 'add.cu:9: void vecAdd(float *, int): block: [3,0,0], thread: [232,0,0] Assertion `i < n` failed.', droppedBytes: 0 },
  ];
  const d = told('device-assert', { result: failed({ error }, {}, { deviceOutput }) });
  assert.equal(d.headline, 'A device-side assert failed at add.cu:9: `i < n` (CUDA_ERROR_ASSERT at step 2 (launch step))');
  assert.deepEqual(d.sourceLocation, { file: 'add.cu', line: 9 });
  assert.match(d.specifics[0]!, /^One thread failed `i < n` at add\.cu:9 in void vecAdd\(float \*, int\); the first: block \(3,0,0\), thread \(232,0,0\)\.$/);
});

test('fault-on-freed-buffer: a launch that faulted on a buffer freed before it', () => {
  const error = cudaError(700, 'CUDA_ERROR_ILLEGAL_ADDRESS');
  assert.equal(judged('fault-on-freed-buffer', { result: failed({ error }) }), null);
  const staleUses = [{ stepIndex: 1, kernel: 'add', buffer: 'c', freedAtStep: 0 }];
  const d = told('fault-on-freed-buffer', { result: failed({ error, sticky: true }, { staleUses }) });
  assert.deepEqual([d.kind, d.buffer], ['use-after-free', 'c']);
  assert.equal(d.headline, 'vecAdd used buffer c after it was freed: CUDA_ERROR_ILLEGAL_ADDRESS at step 2 (launch step)');
  assert.equal(d.specifics[0], 'Buffer c was freed at step 1, and this launch was given its dangling pointer.');
  assert.equal(d.sanitizer?.tool, 'memcheck');
});

test('cuda-error: any other failed call; a memory fault in a launch offers memcheck, the sticky sentence is said once', () => {
  assert.equal(judged('cuda-error', {}), null, 'no failure');
  const d = told('cuda-error', { result: failed({ error: cudaError(700, 'CUDA_ERROR_ILLEGAL_ADDRESS'), sticky: true, duringDeterminismRun: true }) });
  assert.deepEqual(
    [d.kind, d.headline, d.error?.runtimeName, d.error?.sticky],
    ['cuda-error', 'CUDA_ERROR_ILLEGAL_ADDRESS at step 2 (launch step)', 'cudaErrorIllegalAddress', true],
  );
  assert.match(d.specifics[0]!, /^The first run of the plan completed; this error came when the determinism check ran/);
  assert.equal(d.specifics.filter((s) => s === STICKY_SENTENCE).length, 1);
  assert.equal(d.sanitizer?.tool, 'memcheck');
  const notAFault = told('cuda-error', { result: failed({ op: 'sync', error: cudaError(999, 'CUDA_ERROR_UNKNOWN') }) });
  assert.equal(notAFault.sanitizer, null);
  assert.equal(notAFault.headline, 'CUDA_ERROR_UNKNOWN at step 2 (launch step)');
});

test('out-of-bounds-write: the guard bytes changed, told by the elements written', () => {
  assert.equal(judged('out-of-bounds-write', {}), null);
  const guardViolations: GuardViolation[] = [
    {
      stepIndex: 1,
      kernel: 'add',
      entry: 'vecAdd',
      buffer: 'c',
      type: 'f32',
      count: 8,
      damage: { side: 'after', bytesChanged: 4, nearestElement: 8, farthestElement: 8 },
    },
  ];
  const d = told('out-of-bounds-write', { result: runResult({ guardViolations }) });
  assert.equal(d.headline, 'vecAdd wrote past the end of buffer c at step 2');
  assert.match(d.specifics[0]!, /^It wrote elements 8 of a 8-element buffer \(valid indices 0–7\): 4 bytes/);
  assert.match(d.next[0]!, /An index one past the end/);
});

test('use-after-free: a launch given a freed buffer that did not fault this time', () => {
  assert.equal(judged('use-after-free', {}), null);
  const d = told('use-after-free', { result: runResult({ staleUses: [{ stepIndex: 1, kernel: 'add', buffer: 'c', freedAtStep: 0 }] }) });
  assert.equal(d.headline, 'Step 2 launched vecAdd with buffer c, freed at step 1');
});

const wrong = {
  buffer: 'c',
  against: 'iota(0, 1)',
  checked: 8,
  mismatches: 8,
  first: [{ index: 0, actual: Number.NaN, expected: 0 }],
  maxAbsError: 0,
  tolerance: { abs: 0, rel: 0 },
};
const poisonBuffer = (poisonCount: number) => [
  { ...runResult().buffers[0]!, nanCount: 8, poison: { poisonCount, firstPoisonIndex: 0, nanCount: 8, firstNanIndex: 0 } },
];

test('wrong-result-from-unwritten-memory: a wrong read-back that is the poison, blamed on the launch given it unwritten', () => {
  const uninitialised = [{ stepIndex: 1, kernel: 'add', buffer: 'c' }];
  assert.equal(judged('wrong-result-from-unwritten-memory', { result: runResult({ comparisons: [wrong], uninitialised }) }), null, 'no poison came back');
  const result = runResult({ comparisons: [wrong], uninitialised }, { buffers: poisonBuffer(8) });
  assert.equal(
    judged('wrong-result-from-unwritten-memory', { result: runResult({ comparisons: [wrong], uninitialised, poison: false }, { buffers: poisonBuffer(8) }) }),
    null,
  );
  const d = told('wrong-result-from-unwritten-memory', { result });
  assert.deepEqual([d.kind, d.headline], ['uninitialised-read', 'vecAdd read buffer c before anything wrote it']);
  assert.equal(d.specifics[0], 'c[0] is NaN where iota(0, 1) says 0; 8 of 8 elements differ.');
});

test('wrong-result: a read-back that differs from its expectation, at its download step', () => {
  assert.equal(judged('wrong-result', { result: runResult({ comparisons: [{ ...wrong, mismatches: 0, first: [] }] }) }), null);
  const d = told('wrong-result', { result: runResult({ comparisons: [{ ...wrong, mismatches: 1, first: [{ index: 7, actual: 1, expected: 7 }] }] }) });
  assert.equal(d.headline, 'Wrong result in c: 1 of 8 elements differs from iota(0, 1), the first at index 7');
  assert.deepEqual(d.step, { index: 2, label: 'download step', op: 'download' });
  assert.deepEqual(d.specifics, [
    'c[7] is 1 where iota(0, 1) says 7; 1 of 8 elements differs.',
    'Only an end element is wrong: an off-by-one in the index or the bounds check.',
  ]);
});

test('unwritten-memory-read-back: the poison pattern in a read-back, with no expectation needed', () => {
  assert.equal(judged('unwritten-memory-read-back', { result: runResult({}, { buffers: poisonBuffer(0) }) }), null, 'NaN with no unwritten argument');
  assert.equal(judged('unwritten-memory-read-back', { result: runResult({ poison: false }, { buffers: poisonBuffer(8) }) }), null, 'poison off');
  const d = told('unwritten-memory-read-back', {
    result: runResult({ uninitialised: [{ stepIndex: 1, kernel: 'add', buffer: 'c' }] }, { buffers: poisonBuffer(3) }),
  });
  assert.deepEqual([d.kind, d.severity, d.buffer], ['uninitialised-read', 'error', 'c']);
  assert.equal(d.headline, 'c holds memory nothing had written: 3 of 8 elements, the first at index 0');
});

test('nondeterministic: a second identical run that differs; float atomics make it a warning', () => {
  assert.equal(judged('nondeterministic', {}), null);
  const difference = { run: 1, stepIndex: 2, buffer: 'c', type: 'f32' as const, count: 8, differing: 1, firstIndex: 0, first: 1.5, second: 1.25 };
  const determinism = { status: 'compared' as const, reason: null, runs: 1, ms: 1, differences: [difference] };
  const d = told('nondeterministic', { result: runResult({ determinism }) });
  assert.deepEqual([d.severity, d.sanitizer], ['warning', null]);
  assert.equal(d.headline, 'Results differ between two identical runs: 1 of 8 elements of c, the first at index 0 (1.5, then 1.25)');
  assert.match(d.specifics.at(-1)!, /atomic additions \(add\.cu:1\) on a floating-point buffer/);
  const ints = told('nondeterministic', { result: runResult({ determinism: { ...determinism, differences: [{ ...difference, type: 'i32' }] } }) });
  assert.deepEqual([ints.severity, ints.sanitizer?.tool], ['error', 'racecheck']);
});

test('leak: buffers the plan never frees, with their sizes', () => {
  assert.equal(judged('leak', {}), null);
  const d = told('leak', { result: runResult({}, { leaks: [{ name: 'c', bytes: 2048 }] }) });
  assert.equal(d.headline, 'The plan never frees c (2 KiB)');
});

test('ok: names the checks that ran, and those that did not', () => {
  assert.deepEqual(judged('ok', {}), { kind: 'ok' });
  const d = told('ok', { result: runResult({ guardBytes: 0, determinism: { status: 'off', reason: null, runs: 0, ms: 0, differences: [] } }) });
  assert.equal(d.headline, 'The run completed: no CUDA error, no read-back holding unwritten memory.');
  assert.deepEqual(d.specifics, ['Not compared with a second run: turned off.', 'Guard bytes are off: a write past a buffer’s end would not be seen.']);
});

test('every rule’s finding carries its own id, and the first rule that fires decides', () => {
  const facts = runFacts(
    input({
      result: runResult(
        {
          guardViolations: [
            {
              stepIndex: 1,
              kernel: 'add',
              entry: 'vecAdd',
              buffer: 'c',
              type: 'f32',
              count: 8,
              damage: { side: 'before', bytesChanged: 4, nearestElement: -1, farthestElement: -1 },
            },
          ],
        },
        { leaks: [{ name: 'c', bytes: 32 }] },
      ),
    }),
  );
  const fired = RUN_RULES.map((r) => [r.id, r.judge(facts)] as const).filter(([, f]) => f !== null);
  for (const [id, finding] of fired) assert.equal(finding!.kind, id);
  assert.deepEqual(
    fired.map(([id]) => id),
    ['out-of-bounds-write', 'leak', 'ok'],
  );
  assert.equal(diagnoseRun(input({ result: facts.result })).kind, 'out-of-bounds-write');
});
