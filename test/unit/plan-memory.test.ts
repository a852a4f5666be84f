import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { runBlockers } from '../../core/plan/run-readiness';
import { launchPlanSchema, type LaunchPlan, type LaunchPlanInput } from '../../core/plan/plan-schema';
import { deviceLimits, type DeviceProfile } from '../../core/validate/device-limits';
import { checkPlan, launchRefusals, memoryRefusals } from '../../core/validate/plan-check';
import { checkPlanMemory, howMuchTooLarge, MEMORY_RULES, planMemory, type MemoryFacts } from '../../core/validate/plan-memory';
import { ROOT, SAMPLES } from '../helpers/cli';

const GiB = 2 ** 30;
const h100 = deviceLimits((JSON.parse(readFileSync(join(ROOT, 'profiles/nvidia-h100.json'), 'utf8')) as DeviceProfile).device);

/** A sample's plan as the schema reads it (its kernel's source inline, as the host's plan reader leaves it). */
function sample(path: string): LaunchPlan {
  const raw = JSON.parse(readFileSync(join(SAMPLES, path), 'utf8')) as { kernels: { source?: string; sourceFile?: string }[] };
  for (const k of raw.kernels) {
    k.source = '';
    delete k.sourceFile;
  }
  return launchPlanSchema.parse(raw);
}

/** A plan of f32 buffers: each allocated, uploaded when it has an initializer, and freed at the end unless `keep`. */
function plan(buffers: { name: string; gib: number; upload?: boolean; read?: boolean }[], steps?: LaunchPlanInput['steps']): LaunchPlan {
  return launchPlanSchema.parse({
    version: 1,
    kernels: [{ id: 'k', entry: 'k', source: '' }],
    buffers: buffers.map((b) => ({ name: b.name, type: 'f32', count: (b.gib * GiB) / 4, ...(b.upload ? { init: { kind: 'zeros' } } : {}) })),
    steps: steps ?? [
      ...buffers.map((b) => ({ op: 'alloc' as const, buffer: b.name })),
      ...buffers.filter((b) => b.upload).map((b) => ({ op: 'upload' as const, buffer: b.name })),
      ...buffers.filter((b) => b.read).map((b) => ({ op: 'download' as const, buffer: b.name })),
      ...buffers.map((b) => ({ op: 'free' as const, buffer: b.name })),
    ],
  });
}

const facts = (over: Partial<Omit<MemoryFacts, 'device'>> = {}): MemoryFacts => ({ device: h100, freeBytes: null, hostBytes: null, ...over });
const rules = (p: LaunchPlan, f: MemoryFacts) => checkPlanMemory(p, f).map((x) => [x.rule, x.buffer]);

test('the rules, in the order they are asked', () => {
  assert.deepEqual(
    MEMORY_RULES.map(([id]) => id),
    [
      'buffer-larger-than-device',
      'plan-larger-than-device',
      'buffer-larger-than-free',
      'plan-larger-than-free',
      'buffer-larger-than-host',
      'plan-larger-than-host',
    ],
  );
});

test('a buffer larger than the device: which buffer, by how much, the error the driver would give, and the fix', () => {
  const [f, ...rest] = checkPlanMemory(sample('allocation-too-large/plan.json'), facts());
  assert.deepEqual(rest, []);
  assert.equal(f!.rule, 'buffer-larger-than-device');
  assert.equal(f!.buffer, 'x');
  assert.equal(f!.severity, 'error');
  assert.equal(f!.message, 'Buffer `x` asks for 256 GiB; the NVIDIA H100 80GB HBM3 has 79.18 GiB in all: 3.2× too large.');
  assert.deepEqual(
    [f!.driverError, f!.runtimeError],
    [
      { code: 2, name: 'CUDA_ERROR_OUT_OF_MEMORY' },
      { code: 2, name: 'cudaErrorMemoryAllocation' },
    ],
  );
  assert.deepEqual([f!.value, f!.limit], [256 * GiB, h100.totalMemBytes]);
  assert.match(f!.fix, /the whole device is 21,254,373,376 f32 elements/);
  // The fixed variant (1 GiB) fits.
  assert.deepEqual(checkPlanMemory(sample('allocation-too-large/plan.fixed.json'), facts()), []);
});

test('buffers that each fit but are held at once: the step, the buffers and the total', () => {
  const together = plan([
    { name: 'a', gib: 30 },
    { name: 'b', gib: 30 },
    { name: 'c', gib: 30 },
  ]);
  const [f] = checkPlanMemory(together, facts());
  assert.equal(f!.rule, 'plan-larger-than-device');
  assert.equal(f!.message, 'At step 3 the plan holds `a`, `b` and `c` at once: 90 GiB; the NVIDIA H100 80GB HBM3 has 79.18 GiB in all: 1.1× too much.');
  assert.deepEqual(planMemory(together).peak, { bytes: 90 * GiB, stepIndex: 2, buffers: ['a', 'b', 'c'] });
  // Freed before the next is allocated, the same buffers fit.
  const inTurn = plan(
    [
      { name: 'a', gib: 30 },
      { name: 'b', gib: 30 },
      { name: 'c', gib: 30 },
    ],
    ['a', 'b', 'c'].flatMap((buffer) => [
      { op: 'alloc' as const, buffer },
      { op: 'free' as const, buffer },
    ]),
  );
  assert.deepEqual(checkPlanMemory(inTurn, facts()), []);
  // One buffer over the device says it once, about that buffer, not again for the plan.
  assert.deepEqual(
    rules(
      plan([
        { name: 'a', gib: 100 },
        { name: 'b', gib: 1 },
      ]),
      facts(),
    ),
    [['buffer-larger-than-device', 'a']],
  );
  // A buffer no step allocates holds no device memory.
  assert.deepEqual(rules(plan([{ name: 'a', gib: 100 }], [{ op: 'sync' }]), facts()), []);
});

test('free memory, where NVML says it: a buffer or the plan that fits the device but not what is free now', () => {
  const one = plan([{ name: 'big', gib: 20 }]);
  assert.deepEqual(rules(one, facts()), [], 'free memory unknown (a profile): only the total counts');
  const [f] = checkPlanMemory(one, facts({ freeBytes: 12 * GiB }));
  assert.equal(f!.rule, 'buffer-larger-than-free');
  assert.match(
    f!.message,
    /^Buffer `big` asks for 20 GiB; the NVIDIA H100 80GB HBM3 has 12 GiB free now \(of 79\.18 GiB; the CUDA context and other processes hold the rest\): 1\.7× too large\.$/,
  );
  assert.deepEqual(
    rules(
      plan([
        { name: 'a', gib: 8 },
        { name: 'b', gib: 8 },
      ]),
      facts({ freeBytes: 12 * GiB }),
    ),
    [['plan-larger-than-free', null]],
  );
  // Larger than the device outright: that is what is said, not also that it is larger than what is free.
  assert.deepEqual(rules(sample('allocation-too-large/plan.json'), facts({ freeBytes: 12 * GiB })), [['buffer-larger-than-device', 'x']]);
});

test('host memory: the buffers the host must hold (uploads and read-backs) against its total memory', () => {
  const host = facts({ hostBytes: 16 * GiB });
  const [f] = checkPlanMemory(plan([{ name: 'in', gib: 24, upload: true }]), host);
  assert.equal(f!.rule, 'buffer-larger-than-host');
  assert.equal(f!.message, 'Buffer `in` is uploaded, so the host holds all 24 GiB of it too; this machine has 16 GiB of memory in all: 1.5× too large.');
  assert.equal(f!.driverError, null);
  assert.deepEqual(rules(plan([{ name: 'out', gib: 24, read: true }]), host), [['buffer-larger-than-host', 'out']]);
  // Never uploaded nor read back: the host never holds it.
  assert.deepEqual(rules(plan([{ name: 'scratch', gib: 24 }]), host), []);
  const [sum] = checkPlanMemory(
    plan([
      { name: 'a', gib: 10, upload: true },
      { name: 'b', gib: 10, read: true },
    ]),
    host,
  );
  assert.equal(sum!.rule, 'plan-larger-than-host');
  assert.match(sum!.message, /^The buffers the plan uploads and reads back, `a` and `b`, need 20 GiB of host memory together; this machine has 16 GiB in all/);
  assert.deepEqual(rules(plan([{ name: 'in', gib: 24, upload: true }]), facts()), [], 'the host unknown: not checked');
});

test('how much too large: a ratio where it reads well, the bytes over where it is close', () => {
  assert.equal(howMuchTooLarge(256 * GiB, 79.2 * GiB), '3.2× too large');
  assert.equal(howMuchTooLarge(3 * GiB, 1 * GiB), '3× too large');
  assert.equal(howMuchTooLarge(81 * GiB, 79.5 * GiB), '1.5 GiB too large');
  assert.equal(howMuchTooLarge(2 ** 40 * 300, 2 ** 40, 'too much'), '300× too much');
});

test('the whole plan: its launches and its memory, in one check; each refusal one line with its fix; Run says why it is off', () => {
  const broken = checkPlan(sample('allocation-too-large/plan.json'), h100, { freeBytes: null, hostBytes: 64 * GiB }, () => null);
  assert.equal(broken.ok, false);
  assert.deepEqual(launchRefusals(broken.launches), []);
  const lines = memoryRefusals(broken.memory);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, /^Buffer `x` asks for 256 GiB; .*3\.2× too large\. Fix: Make `x` smaller/);
  assert.equal(checkPlan(sample('allocation-too-large/plan.fixed.json'), h100, { freeBytes: null, hostBytes: 64 * GiB }, () => null).ok, true);
  const launch = checkPlan(sample('block-too-large/plan.json'), h100, { freeBytes: null, hostBytes: 64 * GiB }, () => null);
  assert.equal(launch.ok, false);
  assert.deepEqual(launch.memory, []);

  const blockers = runBlockers({
    compile: 'ok',
    documentName: 'kernel.cu',
    planProblem: null,
    refusals: [],
    memoryRefusals: lines,
    deviceLabel: 'NVIDIA H100 (profile)',
    gpu: { present: true },
  });
  assert.deepEqual(
    blockers.map((b) => [b.reason, b.details]),
    [['The plan asks for more memory than there is (checked against NVIDIA H100 (profile) and this machine):', lines]],
  );
});
