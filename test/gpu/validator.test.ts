import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { compileOptionsSchema } from '../../core/compile/compile-options';
import { mulberry32 } from '../../core/plan/buffer-data';
import { encodePointer, encodeScalar } from '../../core/plan/kernel-args';
import { deviceLimits, makeProfile } from '../../core/validate/device-limits';
import type { FunctionAttributes } from '../../core/runner/run-result';
import { carveoutSteps, type KernelLimits } from '../../core/validate/occupancy';
import { validateLaunch } from '../../core/validate/validate-launch';
import { CompileService } from '../../main/compile/compile-service';
import { forkLauncher } from '../../main/process/launcher';
import { RunnerPool } from '../../main/runner/runner-pool';
import { smArch } from '../../core/devices';
import { listDevices } from '../../main/services/device-service';

// Kernels that span the limits: few and many registers, static shared memory up to exactly 48 KiB,
// dynamic shared memory, __launch_bounds__. None writes global memory, nor shared memory it might not
// have (n is never negative): a launch either fails at once or runs clean.
const SOURCE = `
extern "C" __global__ void light(int* flag, int n) { if (n < 0) flag[threadIdx.x] = blockIdx.x; }
extern "C" __global__ void heavy(float* out, int n) {
  float acc[96];
#pragma unroll
  for (int i = 0; i < 96; i++) acc[i] = threadIdx.x * (i + 1) * 0.5f + n;
#pragma unroll
  for (int k = 0; k < 8; k++)
#pragma unroll
    for (int i = 0; i < 96; i++) acc[i] = acc[i] * acc[(i + k + 1) % 96] + 1.0f;
  float s = 0;
#pragma unroll
  for (int i = 0; i < 96; i++) s += acc[i];
  if (n < 0) out[0] = s;
}
extern "C" __global__ void __launch_bounds__(256) bounded(float* out, int n) { if (n < 0) out[threadIdx.x] = n; }
extern "C" __global__ void shared4k(float* out, int n) { __shared__ float s[1024]; s[threadIdx.x % 1024] = n; __syncthreads(); if (n < 0) out[0] = s[(threadIdx.x + 1) % 1024]; }
extern "C" __global__ void shared32k(float* out, int n) { __shared__ float s[8192]; s[threadIdx.x % 8192] = n; __syncthreads(); if (n < 0) out[0] = s[(threadIdx.x + 1) % 8192]; }
extern "C" __global__ void shared48k(float* out, int n) { __shared__ float s[12288]; s[threadIdx.x % 12288] = n; __syncthreads(); if (n < 0) out[0] = s[(threadIdx.x + 1) % 12288]; }
extern "C" __global__ void dynamic(float* out, int n) { extern __shared__ float s[]; if (n < 0) { s[threadIdx.x] = n; __syncthreads(); out[0] = s[0]; } }
`;
const VARIANTS: { name: string; kernel: string; maxRegisters: number | null }[] = [
  { name: 'light', kernel: 'light', maxRegisters: null },
  { name: 'heavy', kernel: 'heavy', maxRegisters: null },
  { name: 'heavy@128', kernel: 'heavy', maxRegisters: 128 },
  { name: 'heavy@80', kernel: 'heavy', maxRegisters: 80 },
  { name: 'heavy@40', kernel: 'heavy', maxRegisters: 40 },
  { name: 'bounded', kernel: 'bounded', maxRegisters: null },
  { name: 'shared4k', kernel: 'shared4k', maxRegisters: null },
  { name: 'shared32k', kernel: 'shared32k', maxRegisters: null },
  { name: 'shared48k', kernel: 'shared48k', maxRegisters: null },
  { name: 'dynamic', kernel: 'dynamic', maxRegisters: null },
];

const compiler = new CompileService(forkLauncher, null);
const pool = new RunnerPool({ launcher: forkLauncher, warmSpare: false });
after(async () => {
  await compiler.dispose();
  await pool.dispose();
});

type Config = [number, number, number, number, number, number, number];

/** A probe kernel compiled for the device, as a module the runner loads. */
async function compileVariant(variant: (typeof VARIANTS)[number], arch: string) {
  const compiled = await compiler.compile({
    source: SOURCE,
    sourceName: 'probe.cu',
    options: compileOptionsSchema.parse({ arch, maxRegisters: variant.maxRegisters }),
    backend: 'auto',
  });
  assert.ok(compiled.ok, compiled.log);
  return { kernel: variant.name, symbol: compiled.kernels.find((k) => k.name === variant.kernel)!.symbol!, image: compiled.image! };
}

/** The validator's view of a function, from the driver's attributes. */
const kernelLimitsOf = (a: FunctionAttributes): KernelLimits => ({
  numRegs: a.numRegs,
  sharedSizeBytes: a.sharedSizeBytes,
  localSizeBytes: a.localSizeBytes,
  maxThreadsPerBlock: a.maxThreadsPerBlock,
  maxDynamicSharedSizeBytes: a.maxDynamicSharedSizeBytes,
});

/** Configurations drawn around every limit the validator knows, seeded so a failure can be replayed. */
function configs(seed: number, count: number, kernelMaxThreads: number, dynamicLimit: number, optin: number): Config[] {
  const rand = mulberry32(seed);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const near = (x: number, spread: number) => Math.max(0, x + Math.floor((rand() * 2 - 1) * spread));
  const out: Config[] = [
    [1, 1, 1, 64, 32, 1, 0],
    [1, 1, 1, 32, 32, 1, 0],
    [1, 1, 1, 1024, 1, 1, 0],
    [1, 1, 1, 1025, 1, 1, 0],
    [1, 1, 1, 1, 1, 64, 0],
    [1, 1, 1, 1, 1, 65, 0],
    [1, 1, 1, 1, 1024, 1, 0],
    [1, 1, 1, 1, 1025, 1, 0],
    [1, 65535, 1, 32, 1, 1, 0],
    [1, 65536, 1, 32, 1, 1, 0],
    [1, 1, 65535, 32, 1, 1, 0],
    [1, 1, 70000, 32, 1, 1, 0],
    [2 ** 31, 1, 1, 32, 1, 1, 0],
    [2 ** 32 - 1, 1, 1, 32, 1, 1, 0],
    [0, 1, 1, 32, 1, 1, 0],
    [1, 1, 1, 0, 1, 1, 0],
    [1, 1, 1, 256, 1, 1, 200000],
    [1, 1, 1, 256, 1, 1, dynamicLimit],
    [1, 1, 1, 256, 1, 1, dynamicLimit + 1],
    [1, 1, 1, kernelMaxThreads, 1, 1, 0],
    [1, 1, 1, kernelMaxThreads + 1, 1, 1, 0],
    [1, 1, 1, kernelMaxThreads + 32, 1, 1, 0],
  ];
  while (out.length < count) {
    const kind = pick(['threads', 'threads', 'kernel', 'dims', 'grid', 'smem', 'smem', 'random']);
    let block: [number, number, number] = [pick([32, 64, 128, 256, 512, 1024]), 1, 1];
    let grid: [number, number, number] = [1 + Math.floor(rand() * 256), 1, 1];
    let smem = 0;
    if (kind === 'threads') block = [near(1024, 96) || 1, 1, 1];
    if (kind === 'kernel') block = [near(kernelMaxThreads, 96) || 1, 1, 1];
    if (kind === 'dims')
      block = pick([
        [near(1024, 8), 1, 1],
        [1, near(1024, 8), 1],
        [1, 1, near(64, 4)],
        [pick([2, 4, 8, 16, 32, 64]), pick([2, 4, 8, 16, 32, 64]), pick([1, 2, 4])],
      ]) as [number, number, number];
    if (kind === 'grid')
      grid = pick([
        [pick([2 ** 31, 2 ** 31 + 7, 2 ** 32 - 1]), 1, 1],
        [1, near(65535, 3), 1],
        [1, 1, near(65535, 3)],
        [near(64, 64), 0, 1],
      ]) as [number, number, number];
    if (kind === 'smem') smem = pick([near(dynamicLimit, 512), near(optin, 2048), near(48 * 1024, 1024), Math.floor(rand() * 240000), near(100000, 8000)]);
    if (kind === 'random') {
      block = [1 + Math.floor(rand() * 1100), 1 + Math.floor(rand() * 3), 1];
      smem = rand() < 0.5 ? 0 : Math.floor(rand() * 120000);
    }
    out.push([...grid, ...block, smem]);
  }
  return out;
}

test('the validator agrees with the driver on 10,000+ launch configurations, and its occupancy with cuOccupancyMaxActiveBlocksPerMultiprocessor', async () => {
  const devices = await listDevices();
  assert.ok(devices.ok);
  const device = devices.devices[0]!;
  if (process.env['GPU_WORKBENCH_FIXTURES_OUT']) {
    writeFileSync(
      join(process.env['GPU_WORKBENCH_FIXTURES_OUT'], 'profile.json'),
      JSON.stringify(makeProfile(device, devices.driverVersion, new Date().toISOString()), null, 2),
    );
  }
  const limits = deviceLimits(device);
  const arch = smArch(device);
  const args = [encodePointer(0n), encodeScalar('i32', 1)];
  let total = 0;
  let verdictAgree = 0;
  let codeAgree = 0;
  let failures = 0;
  let occupancyChecked = 0;
  let occupancyAgree = 0;
  const mismatches: unknown[] = [];
  for (const variant of VARIANTS) {
    const module = await compileVariant(variant, arch);
    for (const phase of ['default', 'opt-in'] as const) {
      const first = await pool.probe(0, {
        module,
        args,
        configs: new Float64Array(0),
        maxDynamicSharedBytes: null,
      });
      const a0 = first.attributes;
      const optinDynamic = limits.sharedPerBlockOptin - a0.sharedSizeBytes;
      const rows = configs(
        total + 17,
        phase === 'default' ? 700 : 400,
        a0.maxThreadsPerBlock,
        phase === 'default' ? a0.maxDynamicSharedSizeBytes : optinDynamic,
        limits.sharedPerBlockOptin,
      );
      let probe;
      try {
        probe = await pool.probe(0, {
          module,
          args,
          configs: new Float64Array(rows.flat()),
          maxDynamicSharedBytes: phase === 'opt-in' ? optinDynamic : null,
        });
      } catch (error) {
        mismatches.push({ variant: variant.name, phase, probeFailed: String(error) });
        total += rows.length;
        continue;
      }
      const a = probe.attributes;
      const kernel = kernelLimitsOf(a);
      rows.forEach((c, r) => {
        total++;
        const v = validateLaunch(limits, kernel, { grid: [c[0], c[1], c[2]], block: [c[3], c[4], c[5]], sharedBytes: c[6] });
        const launched = probe.launch[r]! === 0 && probe.sync[r]! === 0;
        const firstError = v.findings.find((f) => f.severity === 'error');
        const driverCode = probe.launch[r]! || probe.sync[r]!;
        if (v.ok === launched) verdictAgree++;
        if (!launched) failures++;
        if (!launched && firstError?.driverError?.code === driverCode) codeAgree++;
        if (v.ok !== launched || (!launched && firstError?.driverError?.code !== driverCode)) {
          mismatches.push({
            variant: variant.name,
            phase,
            config: c,
            attributes: a,
            validator: v.findings.filter((f) => f.severity === 'error').map((f) => [f.rule, f.driverError?.code]),
            driver: [probe.launch[r], probe.sync[r]],
          });
        }
        if (v.ok && v.occupancy) {
          occupancyChecked++;
          if (v.occupancy.activeBlocksPerSM === probe.occupancy[r]) occupancyAgree++;
          else
            mismatches.push({
              variant: variant.name,
              phase,
              config: c,
              attributes: a,
              occupancy: [v.occupancy.activeBlocksPerSM, probe.occupancy[r]],
              limits: v.occupancy.limits,
            });
        }
      });
      console.log(
        `# ${variant.name} ${phase}: ${a.numRegs} regs, ${a.sharedSizeBytes} B static, max ${a.maxThreadsPerBlock} threads, max dynamic ${a.maxDynamicSharedSizeBytes} B`,
      );
    }
  }
  if (process.env['GPU_WORKBENCH_FIXTURES_OUT'])
    writeFileSync(join(process.env['GPU_WORKBENCH_FIXTURES_OUT'], 'validator-mismatches.json'), JSON.stringify(mismatches.slice(0, 400), null, 1));
  const histogram = new Map<string, { count: number; example: unknown }>();
  for (const m of mismatches as { validator?: [string, number][]; driver?: number[]; config?: number[]; variant?: string }[]) {
    if (!m.validator) continue;
    const key = `predicted ${JSON.stringify(m.validator)} driver ${JSON.stringify(m.driver)}`;
    const h = histogram.get(key) ?? { count: 0, example: [m.variant, m.config] };
    h.count++;
    histogram.set(key, h);
  }
  for (const [key, h] of histogram) console.log(`# mismatch ×${h.count}: ${key} e.g. ${JSON.stringify(h.example)}`);
  console.log(
    `# ${total} configurations: verdict agrees on ${verdictAgree}; of ${failures} failed launches the driver error code agrees on ${codeAgree}; occupancy agrees on ${occupancyAgree} of ${occupancyChecked} valid launches`,
  );
  assert.ok(total >= 10_000, `${total} configurations`);
  assert.equal(verdictAgree, total, 'the validator and the driver disagree on whether a launch works');
  assert.equal(codeAgree, failures, 'the validator predicts a different error code');
  assert.equal(occupancyAgree, occupancyChecked, 'the occupancy differs from the driver');
});

/**
 * Dynamic shared memory values that cross every boundary the driver's verdict or occupancy can change at:
 * the default 48 KiB limit, the opt-in maximum, and every per-block size at which one block fewer fits
 * in a carveout (the 128-byte allocation granularity and the 1 KiB reserved per block included).
 */
function sharedSweep(limits: ReturnType<typeof deviceLimits>, staticBytes: number, defaultDynamic: number): number[] {
  const optinDynamic = limits.sharedPerBlockOptin - staticBytes;
  const values = new Set<number>([0, 1, defaultDynamic - 1, defaultDynamic, defaultDynamic + 1, optinDynamic - 1, optinDynamic, optinDynamic + 1]);
  for (let d = 0; d <= optinDynamic; d += 4096) values.add(d);
  const granularity = limits.computeMajor >= 8 ? 128 : 256;
  for (const kib of carveoutSteps(limits)) {
    for (let blocks = 1; blocks <= 32; blocks++) {
      const fits = Math.floor((kib * 1024) / blocks / granularity) * granularity - staticBytes - limits.reservedSharedPerBlock;
      for (const d of [fits - 1, fits, fits + 1]) if (d >= 0 && d <= optinDynamic + 1) values.add(d);
    }
  }
  return [...values].filter((d) => d >= 0).sort((a, b) => a - b);
}

test('dynamic shared memory from 0 to the opt-in maximum, with and without the opt-in, blocks 32–1024: verdict, error and occupancy equal the driver’s after the same cuFuncSetAttribute', async () => {
  const devices = await listDevices();
  assert.ok(devices.ok);
  const device = devices.devices[0]!;
  const limits = deviceLimits(device);
  const arch = smArch(device);
  const args = [encodePointer(0n), encodeScalar('i32', 1)];
  const blockSizes = Array.from({ length: 32 }, (_, i) => (i + 1) * 32);
  let total = 0;
  let agree = 0;
  let occupancyChecked = 0;
  let occupancyAgree = 0;
  const mismatches: unknown[] = [];
  for (const variant of VARIANTS.filter((v) => ['light', 'heavy@80', 'bounded', 'shared4k', 'shared32k', 'shared48k', 'dynamic'].includes(v.name))) {
    const module = await compileVariant(variant, arch);
    const a = (await pool.probe(0, { module, args, configs: new Float64Array(0), maxDynamicSharedBytes: null })).attributes;
    const kernel = kernelLimitsOf(a);
    const smem = sharedSweep(limits, a.sharedSizeBytes, a.maxDynamicSharedSizeBytes);
    const rows = smem.flatMap((d) => blockSizes.map((b) => [1, 1, 1, b, 1, 1, d]));
    for (const raised of [false, true]) {
      const probe = await pool.probe(0, { module, args, configs: new Float64Array(rows.flat()), maxDynamicSharedBytes: null, raiseDynamicShared: raised });
      rows.forEach((c, r) => {
        total++;
        const v = validateLaunch(limits, kernel, { grid: [1, 1, 1], block: [c[3]!, 1, 1], sharedBytes: c[6]!, raisesDynamicSharedLimit: raised });
        const code = probe.launch[r]! || probe.sync[r]!;
        const predicted = v.findings.find((f) => f.severity === 'error')?.driverError?.code ?? 0;
        const same = v.ok === (code === 0) && predicted === code;
        const where = { variant: variant.name, raised, block: c[3], smem: c[6] };
        if (same) agree++;
        else
          mismatches.push({
            ...where,
            validator: v.findings.filter((f) => f.severity === 'error').map((f) => f.rule),
            predicted,
            driver: code,
          });
        if (v.ok && code === 0 && v.occupancy) {
          occupancyChecked++;
          if (v.occupancy.activeBlocksPerSM === probe.occupancy[r]) occupancyAgree++;
          else
            mismatches.push({
              ...where,
              occupancy: [v.occupancy.activeBlocksPerSM, probe.occupancy[r]],
              limits: v.occupancy.limits,
            });
        }
      });
      console.log(
        `# ${variant.name} ${raised ? 'opt-in' : 'no opt-in'}: ${smem.length} shared sizes × ${blockSizes.length} block sizes, ${a.sharedSizeBytes} B static`,
      );
    }
  }
  if (process.env['GPU_WORKBENCH_FIXTURES_OUT'])
    writeFileSync(join(process.env['GPU_WORKBENCH_FIXTURES_OUT'], 'shared-sweep-mismatches.json'), JSON.stringify(mismatches.slice(0, 400), null, 1));
  for (const m of mismatches.slice(0, 12)) console.log(`# mismatch ${JSON.stringify(m)}`);
  console.log(
    `# shared-memory sweep: ${total} configurations; verdict and error code agree on ${agree}; occupancy agrees on ${occupancyAgree} of ${occupancyChecked} launches that ran`,
  );
  assert.ok(total >= 10_000, `${total} configurations`);
  assert.equal(agree, total, 'the validator and the driver disagree on a verdict or an error code');
  assert.equal(occupancyAgree, occupancyChecked, 'the occupancy differs from the driver');
});
