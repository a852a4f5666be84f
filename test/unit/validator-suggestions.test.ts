import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { dimProduct, formatDim3, type Dim3 } from '../../core/dims';
import { mulberry32 } from '../../core/plan/buffer-data';
import { deviceLimits, deviceProfileSchema, type DeviceLimits } from '../../core/validate/device-limits';
import { defaultDynamicShared } from '../../core/validate/kernel-limits';
import { registerLimitedBlockSize, type KernelLimits } from '../../core/validate/occupancy';
import { validateLaunch, type Finding, type LaunchConfig, type SuggestedLaunch } from '../../core/validate/validate-launch';
import { ROOT } from '../helpers/cli';

// A property test over every rule: whatever the device, kernel and launch, a suggested fix is a launch
// that is itself valid, all of a launch's error fixes together give a launch without errors, and one fix
// never breaks another field. The seed is fixed, so a failure replays; the failure prints its case.
const SEED = 20261124;
const CASES = 30_000;

const profiles = ['nvidia-h100.json', 'nvidia-h200.json'].map((f) =>
  deviceLimits(deviceProfileSchema.parse(JSON.parse(readFileSync(join(ROOT, 'profiles', f), 'utf8'))).device),
);

/** Errors whose fix is in the kernel or the host code: no launch configuration fixes them. */
function unfixableByLaunch(f: Finding, kernel: KernelLimits): boolean {
  if (['static-shared-too-large', 'local-memory', 'cooperative-support', 'cluster-support'].includes(f.rule)) return true;
  // Its fix is cudaFuncSetAttribute, in the host code.
  if (f.rule === 'dynamic-shared-opt-in') return true;
  return (f.rule === 'kernel-threads-per-block' || f.rule === 'kernel-launch-bounds') && kernel.maxThreadsPerBlock === 0;
}

type Rand = () => number;
const picker = (rand: Rand) => ({
  pick: <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!,
  int: (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1)),
  chance: (p: number) => rand() < p,
});

/** A shipped profile, or one with its limits moved to what other GPUs have (an A100, an RTX 30-series, a cut-down part). */
function randomDevice(rand: Rand): DeviceLimits {
  const { pick, chance } = picker(rand);
  const base = pick(profiles);
  const arch = pick([
    {},
    {},
    { computeMajor: 8, computeMinor: 0, sharedPerBlockOptin: 166912, sharedPerSM: 167936, maxBlocksPerSM: 32, clusterLaunch: false },
    { computeMajor: 8, computeMinor: 6, sharedPerBlockOptin: 101376, sharedPerSM: 102400, maxThreadsPerSM: 1536, maxBlocksPerSM: 16, clusterLaunch: false },
  ]);
  const maxThreadsPerBlock = pick([base.maxThreadsPerBlock, base.maxThreadsPerBlock, 512, 768]);
  return {
    ...base,
    ...arch,
    smCount: pick([base.smCount, 1, 8, 84, 200]),
    maxThreadsPerBlock,
    maxBlockDim: pick([
      [Math.min(1024, maxThreadsPerBlock), Math.min(1024, maxThreadsPerBlock), 64],
      [Math.min(512, maxThreadsPerBlock), Math.min(512, maxThreadsPerBlock), 64],
      [Math.min(256, maxThreadsPerBlock), Math.min(1024, maxThreadsPerBlock), 16],
    ]),
    maxGridDim: pick([base.maxGridDim, base.maxGridDim, [65535, 65535, 65535], [1000, 100, 10]]),
    regsPerBlock: pick([base.regsPerBlock, base.regsPerBlock, 32768]),
    cooperativeLaunch: chance(0.85),
    clusterLaunch: 'clusterLaunch' in arch ? false : chance(0.85),
    totalMemBytes: pick([base.totalMemBytes, 8 * 2 ** 30]),
  };
}

/** A kernel as the driver would report it: registers and launch bounds fix its thread limit, static shared memory its default dynamic limit. */
function randomKernel(rand: Rand, device: DeviceLimits): KernelLimits {
  const { pick, int, chance } = picker(rand);
  const numRegs = pick([0, 16, 32, 40, 64, 128, 200, 255, int(0, 255)]);
  const sharedSizeBytes = pick([0, 0, 1024, 48 * 1024, 48 * 1024 + 4, 100_000, device.sharedPerBlockOptin, device.sharedPerBlockOptin + 1, int(0, 300 * 1024)]);
  const bound = pick([device.maxThreadsPerBlock, device.maxThreadsPerBlock, 1000, 256, 128, 100, 96, 32, 16, 0]);
  return {
    numRegs,
    sharedSizeBytes,
    localSizeBytes: pick([0, 0, 0, 512, 4096, 2 ** 20, int(0, 2 ** 16)]),
    maxThreadsPerBlock: Math.min(registerLimitedBlockSize(device, numRegs), bound),
    maxDynamicSharedSizeBytes: defaultDynamicShared(device, sharedSizeBytes),
    ...(chance(0.1) ? { barriers: pick([1, 2, 16]) } : {}),
  };
}

function randomConfig(rand: Rand, device: DeviceLimits, kernel: KernelLimits): LaunchConfig {
  const { pick, int, chance } = picker(rand);
  const dim = (max: number): number => pick([0, 1, 2, 31, 32, 33, 64, 100, 1000, max - 1, max, max + 1, int(1, max), 2 ** 31, 2 ** 32 - 1]);
  const some = (max: number) => (chance(0.6) ? 1 : dim(max));
  const leftByOptIn = device.sharedPerBlockOptin - kernel.sharedSizeBytes;
  // A third of the launches are ordinary ones, where the warnings and their suggestions live.
  if (chance(0.33))
    return {
      grid: [int(1, 4 * device.smCount), pick([1, 1, 2, 8]), 1],
      block: [pick([32, 64, 96, 100, 128, 250, 256, 512, 1024, int(1, 1024)]), pick([1, 1, 2, 4]), 1],
      sharedBytes: pick([0, 0, 4096, int(0, Math.max(0, leftByOptIn))]),
      cooperative: chance(0.25),
      cluster: chance(0.2) ? [pick([1, 2, 4, 8]), 1, 1] : null,
      raisesDynamicSharedLimit: chance(0.7),
    };
  return {
    grid: [dim(device.maxGridDim[0]), some(device.maxGridDim[1]), some(device.maxGridDim[2])],
    block: [dim(device.maxBlockDim[0]), some(device.maxBlockDim[1]), some(device.maxBlockDim[2])],
    sharedBytes: pick([
      0,
      0,
      1,
      48 * 1024,
      48 * 1024 + 1,
      kernel.maxDynamicSharedSizeBytes,
      kernel.maxDynamicSharedSizeBytes + 1,
      Math.max(0, leftByOptIn),
      leftByOptIn + 1,
      2 ** 31,
      int(0, 300_000),
    ]),
    cooperative: chance(0.25),
    cluster: chance(0.2) ? [pick([1, 2, 2, 3, 4, 8, 16, 32]), pick([1, 1, 2, 3]), pick([1, 1, 2])] : null,
    raisesDynamicSharedLimit: chance(0.5),
  };
}

/** (a) Every number of a suggestion is a whole number within the device's (and the kernel's) limits. */
function outOfLimits(device: DeviceLimits, kernel: KernelLimits, s: SuggestedLaunch): string[] {
  const out: string[] = [];
  const check = (v: number, lo: number, hi: number, what: string) => {
    if (!Number.isInteger(v) || v < lo || v > hi) out.push(`${what} = ${v}, outside [${lo}, ${hi}]`);
  };
  s.grid?.forEach((d, i) => check(d, 1, device.maxGridDim[i]!, `grid[${i}]`));
  s.block?.forEach((d, i) => check(d, 1, device.maxBlockDim[i]!, `block[${i}]`));
  if (s.block) check(dimProduct(s.block), 1, Math.min(device.maxThreadsPerBlock, kernel.maxThreadsPerBlock || Infinity), 'threads');
  if (s.sharedBytes !== undefined) check(s.sharedBytes, 0, device.sharedPerBlockOptin - kernel.sharedSizeBytes, 'sharedBytes');
  s.cluster?.forEach((d, i) => check(d, 1, 16, `cluster[${i}]`));
  if (s.cluster) check(dimProduct(s.cluster), 1, 16, 'cluster size');
  return out;
}

/** The fix text carries the suggestion's numbers: each field it changes, as the launch would be written. */
function textMisses(config: LaunchConfig, f: Finding): string[] {
  const s = f.suggested!;
  const fix = f.fix ?? '';
  const out: string[] = [];
  for (const k of ['grid', 'block', 'cluster'] as const) {
    const to = s[k];
    const from = config[k] ?? [1, 1, 1];
    if (!to || sameDims(to, from)) continue;
    const changed = [0, 1, 2].filter((i) => to[i] !== from[i]);
    const forms = [formatDim3(to), `(${to.join(',')})`, ...(changed.length === 1 ? [`.${'xyz'[changed[0]!]} = ${to[changed[0]!]}`] : [])];
    if (!forms.some((form) => fix.includes(form))) out.push(`${k} ${JSON.stringify(to)} is suggested but not in "${fix}"`);
  }
  if (s.sharedBytes !== undefined && s.sharedBytes !== config.sharedBytes) {
    const said = s.sharedBytes === 0 ? /without dynamic shared memory/.test(fix) : new RegExp(`(^|\\D)${s.sharedBytes}(\\D|$)`).test(fix);
    if (!said) out.push(`sharedBytes ${s.sharedBytes} is suggested but not in "${fix}"`);
  }
  return out;
}

const sameDims = (a: Dim3, b: Dim3) => a.every((d, i) => d === b[i]);
const errorKeys = (findings: Finding[]) => new Set(findings.filter((f) => f.severity === 'error').map((f) => `${f.rule}@${f.field}`));
const apply = (config: LaunchConfig, s: SuggestedLaunch): LaunchConfig => ({ ...config, ...s });

/** Every property for one case; the problems found, each with what reproduces it. */
function problemsOf(device: DeviceLimits, kernel: KernelLimits, config: LaunchConfig): string[] {
  const v = validateLaunch(device, kernel, config);
  const before = errorKeys(v.findings);
  const out: string[] = [];
  for (const f of v.findings) {
    const text = `${f.message} ${f.fix ?? ''}`;
    // A minus sign before a digit, not a hyphen in a word or a range ("2^31−1" uses U+2212).
    if (/(^|[^\w^])-\d/.test(text)) out.push(`${f.rule}: a negative number in "${text}"`);
    if (f.severity === 'error' && unfixableByLaunch(f, kernel) && f.suggested) out.push(`${f.rule}: suggests a launch change, but no launch fixes it`);
    if (!f.suggested) continue;
    out.push(...outOfLimits(device, kernel, f.suggested).map((p) => `${f.rule}: ${p}`), ...textMisses(config, f).map((p) => `${f.rule}: ${p}`));
    // (c) Taking one suggestion fixes its own error and breaks nothing else.
    const after = validateLaunch(device, kernel, apply(config, f.suggested));
    for (const e of after.findings.filter((x) => x.severity === 'error' && !unfixableByLaunch(x, kernel))) {
      if (f.severity === 'error' && e.rule === f.rule) out.push(`${f.rule}: still fails after its own suggestion ${JSON.stringify(f.suggested)}: ${e.message}`);
      else if (!before.has(`${e.rule}@${e.field}`))
        out.push(`${f.rule}: its suggestion ${JSON.stringify(f.suggested)} brings a new error, ${e.rule}: ${e.message}`);
    }
  }
  // (b) All error suggestions together: no error left that a launch could fix.
  const errors = v.findings.filter((f) => f.severity === 'error');
  const together = errors.reduce((c, f) => apply(c, f.suggested ?? {}), config);
  for (const e of validateLaunch(device, kernel, together).findings.filter((x) => x.severity === 'error' && !unfixableByLaunch(x, kernel)))
    out.push(`${e.rule} remains after every error's suggestion was applied: ${e.message}`);
  return out;
}

test(`every suggestion is a valid launch that fixes its error and breaks nothing else, on ${CASES} random devices, kernels and launches`, () => {
  const rand = mulberry32(SEED);
  const failures: string[] = [];
  let suggestions = 0;
  let errorCases = 0;
  for (let n = 0; n < CASES && failures.length < 10; n++) {
    const device = randomDevice(rand);
    const kernel = randomKernel(rand, device);
    const config = randomConfig(rand, device, kernel);
    const v = validateLaunch(device, kernel, config);
    suggestions += v.findings.filter((f) => f.suggested).length;
    if (!v.ok) errorCases++;
    for (const p of problemsOf(device, kernel, config))
      failures.push(
        `case ${n}: ${p}\n  device ${device.name} ${JSON.stringify({ ...device, name: undefined })}\n  kernel ${JSON.stringify(kernel)}\n  config ${JSON.stringify(config)}`,
      );
  }
  assert.deepEqual(failures.slice(0, 10), []);
  assert.ok(suggestions > CASES / 2, `${suggestions} suggestions checked`);
  assert.ok(errorCases > CASES / 3, `${errorCases} launches with errors`);
});

test('static shared memory alone over the limit: the kernel is named, no launch field is suggested or outlined', () => {
  const device = profiles[0]!;
  const kernel: KernelLimits = { numRegs: 16, sharedSizeBytes: 400_000, localSizeBytes: 0, maxThreadsPerBlock: 1024, maxDynamicSharedSizeBytes: 0 };
  const v = validateLaunch(device, kernel, { grid: [132, 1, 1], block: [256, 1, 1], sharedBytes: 0 });
  assert.deepEqual(
    v.findings.map((f) => [f.rule, f.field, f.suggested]),
    [['static-shared-too-large', 'kernel', null]],
  );
  assert.match(v.findings[0]!.message, /static __shared__ memory alone is 390\.63 KiB \(400,000 bytes\)/);
  assert.match(v.findings[0]!.fix!, /Shrink the static __shared__ arrays in the kernel source/);
});

test('a cooperative launch whose block is fixed gets the grid that fits with the fixed block', () => {
  const device = profiles[1]!;
  const kernel: KernelLimits = { numRegs: 64, sharedSizeBytes: 0, localSizeBytes: 0, maxThreadsPerBlock: 1024, maxDynamicSharedSizeBytes: 48 * 1024 };
  const config: LaunchConfig = { grid: [1000, 1, 1], block: [64, 32, 1], sharedBytes: 0, cooperative: true };
  const f = validateLaunch(device, kernel, config).findings.find((x) => x.rule === 'threads-per-block')!;
  // 64 registers × 1024 threads: one block per SM, so 132 blocks at most.
  assert.deepEqual(f.suggested, { block: [64, 16, 1], grid: [132, 1, 1] });
  assert.match(f.fix!, /Use \(64,16\) instead of \(64,32\).*With it, use gridDim.x = 132, so that every block of the cooperative launch is resident at once/);
  assert.equal(validateLaunch(device, kernel, { ...config, ...f.suggested }).ok, true);
});

test('a partial warp on a kernel limited below one warp suggests no block', () => {
  const device = profiles[0]!;
  const kernel: KernelLimits = { numRegs: 16, sharedSizeBytes: 0, localSizeBytes: 0, maxThreadsPerBlock: 16, maxDynamicSharedSizeBytes: 48 * 1024 };
  const f = validateLaunch(device, kernel, { grid: [132, 1, 1], block: [10, 1, 1], sharedBytes: 0 }).findings.find((x) => x.rule === 'partial-warp')!;
  assert.equal(f.suggested, null);
  assert.match(f.fix!, /at most 16 threads per block, less than a warp/);
});

test('-maxrregcount is only suggested where it lets the block launch', () => {
  const device = profiles[0]!;
  const kernel: KernelLimits = { numRegs: 255, sharedSizeBytes: 0, localSizeBytes: 0, maxThreadsPerBlock: 256, maxDynamicSharedSizeBytes: 48 * 1024 };
  const f = validateLaunch(device, kernel, { grid: [132, 1, 1], block: [1024, 1, 1], sharedBytes: 0 }).findings.find(
    (x) => x.rule === 'kernel-threads-per-block',
  )!;
  const regs = Number(/-maxrregcount=(\d+)/.exec(f.fix!)![1]);
  assert.ok(regs >= 16 && registerLimitedBlockSize(device, regs) >= 1024, `${regs} registers let 1024 threads launch`);
  assert.deepEqual(f.suggested, { block: [256, 1, 1] });
});

test('a cluster that cannot divide the grid within its limit is made smaller instead', () => {
  const device: DeviceLimits = { ...profiles[0]!, maxGridDim: [2 ** 31 - 1, 65535, 10] };
  const kernel: KernelLimits = { numRegs: 16, sharedSizeBytes: 0, localSizeBytes: 0, maxThreadsPerBlock: 1024, maxDynamicSharedSizeBytes: 48 * 1024 };
  const cluster: Dim3 = [1, 1, 16];
  const f = validateLaunch(device, kernel, { grid: [1, 1, 6], block: [128, 1, 1], sharedBytes: 0, cluster }).findings.find(
    (x) => x.rule === 'cluster-divides-grid',
  )!;
  // Up to 16 is over the z limit of 10, down is 0: a cluster of gcd(6, 16) = 2 on z divides 6.
  assert.deepEqual(f.suggested, { cluster: [1, 1, 2] });
  assert.match(f.fix!, /Use a cluster of \(1,1,2\), which divides the grid/);
});

test('a cluster too large that does not divide the grid: one fix for both, the grid rounded to the smaller cluster', () => {
  const device = profiles[0]!;
  const kernel: KernelLimits = { numRegs: 32, sharedSizeBytes: 0, localSizeBytes: 0, maxThreadsPerBlock: 1024, maxDynamicSharedSizeBytes: 48 * 1024 };
  const config: LaunchConfig = { grid: [33, 3, 1], block: [128, 1, 1], sharedBytes: 0, cluster: [32, 2, 1] };
  const v = validateLaunch(device, kernel, config);
  const divides = v.findings.filter((f) => f.rule === 'cluster-divides-grid');
  assert.deepEqual(
    divides.map((f) => f.suggested),
    [
      { grid: [36, 4, 1], cluster: [4, 2, 1] },
      { grid: [36, 4, 1], cluster: [4, 2, 1] },
    ],
  );
  assert.deepEqual(v.findings.find((f) => f.rule === 'cluster-size')?.suggested, { cluster: [4, 2, 1] });
  assert.equal(validateLaunch(device, kernel, { ...config, ...divides[0]!.suggested }).ok, true);
});
