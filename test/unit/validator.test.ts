import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Dim3 } from '../../core/dims';
import { deviceLimits, deviceProfileSchema } from '../../core/validate/device-limits';
import { defaultDynamicShared } from '../../core/validate/kernel-limits';
import { occupancy, registerLimitedBlockSize, suggestBlockSize, type KernelLimits } from '../../core/validate/occupancy';
import { effectiveKernelLimits, validateLaunch } from '../../core/validate/validate-launch';
import { staticSharedArrays } from '../../core/compile/shared-arrays';
import { ROOT } from '../helpers/cli';

// The H200 profile captured by the GPU suite (gpu-workbench devices --json --save-profile).
const profile = deviceProfileSchema.parse(JSON.parse(readFileSync(join(ROOT, 'profiles/nvidia-h200.json'), 'utf8')));
const h200 = deviceLimits(profile.device);
const light: KernelLimits = { numRegs: 10, sharedSizeBytes: 0, localSizeBytes: 0, maxThreadsPerBlock: 1024, maxDynamicSharedSizeBytes: 48 * 1024 };
const run = (block: Dim3, grid: Dim3 = [132, 1, 1], sharedBytes = 0, kernel = light, extra = {}) =>
  validateLaunch(h200, kernel, { grid, block, sharedBytes, ...extra });
const errors = (v: ReturnType<typeof run>) => v.findings.filter((f) => f.severity === 'error').map((f) => [f.rule, f.driverError?.code]);

test('the profile gives the H200 limits', () => {
  assert.equal(h200.maxThreadsPerBlock, 1024);
  assert.deepEqual(h200.maxGridDim, [2 ** 31 - 1, 65535, 65535]);
  assert.equal(h200.sharedPerBlockOptin, 232448);
  assert.equal(h200.sharedPerSM, 233472);
  assert.equal(h200.reservedSharedPerBlock, 1024);
  assert.equal(h200.smCount, 132);
});

test('threads per block: 1024 works, 1025 and 64×32 fail with the fix named', () => {
  assert.deepEqual(errors(run([1024, 1, 1])), []);
  assert.deepEqual(errors(run([1025, 1, 1])), [
    ['block-dim', 1],
    ['threads-per-block', 1],
  ]);
  const v = run([64, 32, 1]);
  assert.deepEqual(errors(v), [['threads-per-block', 1]]);
  const f = v.findings.find((x) => x.rule === 'threads-per-block')!;
  assert.equal(f.runtimeError?.name, 'cudaErrorInvalidConfiguration');
  assert.match(f.fix!, /Use \(64,16\) instead of \(64,32\) — 1024 threads is this device's limit/);
});

test('block dims per axis: z at 64 works, 65 fails', () => {
  assert.deepEqual(errors(run([1, 1, 64])), []);
  assert.deepEqual(errors(run([1, 1, 65])), [['block-dim', 1]]);
});

test('grid dims per axis: at, above; zero anywhere', () => {
  assert.deepEqual(errors(run([32, 1, 1], [2 ** 31 - 1, 1, 1])), []);
  assert.deepEqual(errors(run([32, 1, 1], [2 ** 31, 1, 1])), [['grid-dim', 1]]);
  assert.deepEqual(errors(run([32, 1, 1], [1, 65535, 1])), []);
  assert.deepEqual(errors(run([32, 1, 1], [1, 65536, 1])), [['grid-dim', 1]]);
  assert.deepEqual(errors(run([32, 1, 1], [1, 1, 70000])), [['grid-dim', 1]]);
  assert.deepEqual(errors(run([32, 1, 1], [0, 1, 1])), [['grid-dim-positive', 1]]);
  assert.deepEqual(errors(run([0, 1, 1])), [['block-dim-positive', 1]]);
});

test('dynamic shared memory: the default 48 KiB, the opt-in, and the device maximum', () => {
  assert.deepEqual(errors(run([256, 1, 1], undefined, 48 * 1024)), []);
  assert.deepEqual(errors(run([256, 1, 1], undefined, 48 * 1024 + 1)), [['dynamic-shared-opt-in', 1]]);
  // The workbench's runner raises the attribute itself: a note, not an error.
  const raised = run([256, 1, 1], undefined, 100_000, light, { raisesDynamicSharedLimit: true });
  assert.deepEqual(errors(raised), []);
  assert.equal(raised.findings.find((f) => f.rule === 'dynamic-shared-opt-in')?.severity, 'note');
  assert.deepEqual(errors(run([256, 1, 1], undefined, 232448, { ...light, maxDynamicSharedSizeBytes: 232448 })), []);
  assert.deepEqual(errors(run([256, 1, 1], undefined, 232449, { ...light, maxDynamicSharedSizeBytes: 232448 })), [['shared-per-block', 1]]);
  // 200000 bytes with 48 KiB of static shared: over the maximum, whatever the opt-in.
  assert.deepEqual(errors(run([256, 1, 1], undefined, 200_000, { ...light, sharedSizeBytes: 49152, maxDynamicSharedSizeBytes: 183296 })), [
    ['shared-per-block', 1],
  ]);
});

test('occupancy with opted-in dynamic shared memory counts with the limit the launch will have (H100: 2 blocks per SM at 96 KiB)', () => {
  const h100Profile = deviceProfileSchema.parse(JSON.parse(readFileSync(join(ROOT, 'profiles/nvidia-h100.json'), 'utf8')));
  const h100 = deviceLimits(h100Profile.device);
  const kernel: KernelLimits = { numRegs: 16, sharedSizeBytes: 0, localSizeBytes: 0, maxThreadsPerBlock: 1024, maxDynamicSharedSizeBytes: 48 * 1024 };
  const raised = validateLaunch(h100, kernel, { grid: [132, 1, 1], block: [256, 1, 1], sharedBytes: 98304, raisesDynamicSharedLimit: true });
  assert.ok(raised.ok);
  // 98304 + 1024 reserved = 99328 bytes per block; the 228 KiB carveout (233472 bytes) holds two.
  assert.equal(raised.occupancy?.activeBlocksPerSM, 2);
  assert.deepEqual(raised.occupancy?.limiters, ['shared memory']);
  assert.equal(raised.occupancy?.sharedPerSMCarveout, 228 * 1024);
  // The suggested block size counts with the same limit: two blocks of 1024 threads fill the SM.
  assert.equal(raised.suggestedBlockSize, 1024);
  const notRaised = validateLaunch(h100, kernel, { grid: [132, 1, 1], block: [256, 1, 1], sharedBytes: 98304 });
  assert.equal(notRaised.ok, false);
  assert.deepEqual(
    notRaised.findings.filter((f) => f.severity === 'error').map((f) => f.rule),
    ['dynamic-shared-opt-in'],
  );
  assert.equal(effectiveKernelLimits(kernel, { sharedBytes: 1024, raisesDynamicSharedLimit: true }), kernel, 'under the default nothing is raised');
});

test("a kernel's default dynamic shared limit is 48 KiB less its static memory, or what the opt-in leaves above 48 KiB (measured on an H100)", () => {
  assert.equal(defaultDynamicShared(h200, 40960), 8192);
  assert.equal(defaultDynamicShared(h200, 49152), 0);
  assert.equal(defaultDynamicShared(h200, 65536), 166912);
  assert.equal(defaultDynamicShared(h200, 400_000), 0);
});

test('100000 floats of static __shared__ cannot launch anywhere', () => {
  const source = 'extern "C" __global__ void big(float* out) {\n  __shared__ float tile[100000];\n  tile[threadIdx.x] = 1;\n  out[0] = tile[0];\n}\n';
  const v = run([256, 1, 1], undefined, 0, {
    ...light,
    sharedSizeBytes: 400_000,
    maxDynamicSharedSizeBytes: 0,
    sharedArrays: staticSharedArrays(source, 'big'),
  });
  // Measured on an H100 (driver 580): a module with more static shared memory than the opt-in fails to load.
  assert.deepEqual(errors(v), [['static-shared-too-large', 218]]);
  const f = v.findings[0]!;
  // Static memory alone breaks the limit: said so, the array named, and no launch field offered as the fix.
  assert.equal(f.field, 'kernel');
  assert.equal(f.suggested, null);
  assert.match(f.message, /static __shared__ memory alone is 390\.63 KiB \(400,000 bytes\)/);
  assert.match(f.message, /__shared__ float tile\[100000\] \(390\.63 KiB\) at line 2/);
  assert.match(f.fix!, /Shrink tile in the kernel source/);
  assert.doesNotMatch(f.message + f.fix, /-\d/);
});

test('registers: a 255-register kernel at 1024 threads is out of resources (701); launch bounds give INVALID_VALUE', () => {
  const heavy: KernelLimits = { ...light, numRegs: 255, maxThreadsPerBlock: registerLimitedBlockSize(h200, 255) };
  assert.equal(heavy.maxThreadsPerBlock, 256);
  assert.deepEqual(errors(run([256, 1, 1], undefined, 0, heavy)), []);
  const v = run([1024, 1, 1], undefined, 0, heavy);
  assert.deepEqual(errors(v), [['kernel-threads-per-block', 701]]);
  assert.equal(v.findings[0]!.runtimeError?.name, 'cudaErrorLaunchOutOfResources');
  assert.match(v.findings[0]!.fix!, /at most 256 threads per block/);
  const bounded: KernelLimits = { ...light, maxThreadsPerBlock: 256 };
  assert.deepEqual(errors(run([257, 1, 1], undefined, 0, bounded)), [['kernel-launch-bounds', 1]]);
  // The driver checks shared memory before the kernel's thread limit: that error comes first.
  assert.deepEqual(errors(run([1024, 1, 1], undefined, 60_000, heavy))[0], ['dynamic-shared-opt-in', 1]);
});

test('occupancy follows the allocation granularities (values the GPU suite checked on the H200)', () => {
  assert.equal(occupancy(h200, light, 256, 0).activeBlocksPerSM, 8);
  assert.deepEqual(occupancy(h200, light, 256, 0).limiters, ['warps']);
  assert.equal(occupancy(h200, light, 32, 0).activeBlocksPerSM, 32);
  assert.deepEqual(occupancy(h200, light, 32, 0).limiters, ['blocks per SM']);
  const regs127: KernelLimits = { ...light, numRegs: 127, maxThreadsPerBlock: 512 };
  assert.equal(occupancy(h200, regs127, 128, 0).activeBlocksPerSM, 4);
  assert.deepEqual(occupancy(h200, regs127, 128, 0).limiters, ['registers']);
  const s = occupancy(h200, { ...light, maxDynamicSharedSizeBytes: 232448 }, 128, 100_000);
  assert.equal(s.allocatedSharedPerBlock, 101_120); // 100000 + 1024 reserved, rounded up to 128
  assert.equal(s.activeBlocksPerSM, 2);
  assert.deepEqual(s.limiters, ['shared memory']);
  assert.equal(occupancy(h200, light, 1025, 0).activeBlocksPerSM, 0);
});

test('the suggested block size maximises occupancy, as cuOccupancyMaxPotentialBlockSize does', () => {
  assert.equal(suggestBlockSize(h200, light, 0).blockSize, 1024);
  const regs127: KernelLimits = { ...light, numRegs: 127, maxThreadsPerBlock: 512 };
  const s = suggestBlockSize(h200, regs127, 0);
  assert.equal(s.occupancy, 0.25);
  assert.equal(s.minGridSize % h200.smCount, 0);
});

test('warnings: partial warps, 32-bit index overflow, an underfilled device; clusters and cooperative launches', () => {
  assert.ok(run([100, 1, 1]).findings.some((f) => f.rule === 'partial-warp' && /Use 128/.test(f.fix!)));
  assert.ok(run([1024, 1, 1], [2 ** 21 + 1, 1, 1]).findings.some((f) => f.rule === 'index-overflow'));
  assert.ok(run([256, 1, 1], [4, 1, 1]).findings.some((f) => f.rule === 'underfilled-device'));
  assert.deepEqual(errors(run([128, 1, 1], [7, 1, 1], 0, light, { cluster: [2, 1, 1] })), [['cluster-divides-grid', 912]]);
  assert.deepEqual(errors(run([128, 1, 1], [8, 1, 1], 0, light, { cluster: [2, 1, 1] })), []);
  assert.equal(run([128, 1, 1], [16, 1, 1], 0, light, { cluster: [16, 1, 1] }).findings.find((f) => f.rule === 'cluster-size')?.severity, 'warning');
  assert.deepEqual(errors(run([128, 1, 1], [32, 1, 1], 0, light, { cluster: [32, 1, 1] })), [['cluster-size', 912]]);
  // 16 blocks of 128 threads fit per SM: 132 × 16 = 2112 blocks can be co-resident.
  assert.deepEqual(errors(run([128, 1, 1], [2112, 1, 1], 0, light, { cooperative: true })), []);
  assert.deepEqual(errors(run([128, 1, 1], [2113, 1, 1], 0, light, { cooperative: true })), [['cooperative-fit', 720]]);
});

test('local memory: a huge per-thread stack cannot be reserved for the whole device', () => {
  const v = run([128, 1, 1], undefined, 0, { ...light, localSizeBytes: 600 * 1024 });
  assert.deepEqual(errors(v), [['local-memory', 2]]);
  assert.equal(run([128, 1, 1], undefined, 0, { ...light, localSizeBytes: 2048 }).findings.find((f) => f.rule === 'local-memory')?.severity, 'warning');
});

test('the shipped H100 profile loads, and the same launch fits both Hoppers', () => {
  const h100 = deviceLimits(deviceProfileSchema.parse(JSON.parse(readFileSync(join(ROOT, 'profiles/nvidia-h100.json'), 'utf8'))).device);
  assert.match(h100.name, /H100/);
  assert.equal(h100.smCount, 132);
  assert.ok(h100.totalMemBytes < h200.totalMemBytes);
  assert.equal(h100.sharedPerBlockOptin, h200.sharedPerBlockOptin);
  assert.deepEqual(
    validateLaunch(h100, light, { grid: [132, 1, 1], block: [64, 32, 1], sharedBytes: 0 })
      .findings.filter((f) => f.severity === 'error')
      .map((f) => f.rule),
    ['threads-per-block'],
  );
});
