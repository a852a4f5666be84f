import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import type { Dim3 } from '../../core/dims';
import { mulberry32 } from '../../core/plan/buffer-data';
import { deviceLimits, deviceProfileSchema, type DeviceLimits } from '../../core/validate/device-limits';
import { registerLimitedBlockSize, type KernelLimits } from '../../core/validate/occupancy';
import { validateLaunch, type Finding, type LaunchConfig } from '../../core/validate/validate-launch';
import { ROOT } from '../helpers/cli';

// A property test over every rule: whatever the device, kernel and launch, a suggested fix is a launch
// configuration that is itself valid (for the fields it names), never a negative or out-of-range number.
const profiles = ['nvidia-h100.json', 'nvidia-h200.json'].map((f) =>
  deviceLimits(deviceProfileSchema.parse(JSON.parse(readFileSync(join(ROOT, 'profiles', f), 'utf8'))).device),
);

const CONFIG_RULES_WITHOUT_LAUNCH_FIX = new Set(['static-shared-too-large', 'local-memory', 'cooperative-support', 'cluster-support', 'dynamic-shared-opt-in']);

function within(device: DeviceLimits, s: NonNullable<Finding['suggested']>): string[] {
  const out: string[] = [];
  const int = (v: number, lo: number, hi: number, what: string) => {
    if (!Number.isInteger(v) || v < lo || v > hi) out.push(`${what} = ${v} outside [${lo}, ${hi}]`);
  };
  s.grid?.forEach((d, i) => int(d, 1, device.maxGridDim[i]!, `grid.${i}`));
  s.block?.forEach((d, i) => int(d, 1, device.maxBlockDim[i]!, `block.${i}`));
  if (s.block) int(s.block[0] * s.block[1] * s.block[2], 1, device.maxThreadsPerBlock, 'threads');
  if (s.sharedBytes !== undefined) int(s.sharedBytes, 0, device.sharedPerBlockOptin, 'sharedBytes');
  return out;
}

test('every suggested configuration is valid for the fields it names, on 20,000 random devices, kernels and launches', () => {
  const rand = mulberry32(20261123);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const dim = (max: number): number => pick([0, 1, 2, 31, 32, 33, 64, 1000, max - 1, max, max + 1, int(1, max), 2 ** 31, 2 ** 32 - 1]);
  const failures: string[] = [];
  let suggestions = 0;
  for (let n = 0; n < 20_000; n++) {
    const base = pick(profiles);
    const device: DeviceLimits = { ...base, smCount: pick([base.smCount, 1, 8, 200]), sharedPerBlockOptin: pick([base.sharedPerBlockOptin, 101376, 49152]) };
    const numRegs = pick([0, 16, 32, 64, 128, 200, 255, int(0, 255)]);
    const registerLimit = registerLimitedBlockSize(device, numRegs);
    const sharedSizeBytes = pick([0, 1024, 48 * 1024, 100_000, 232448, 400_000, int(0, 300_000)]);
    const kernel: KernelLimits = {
      numRegs,
      sharedSizeBytes,
      localSizeBytes: pick([0, 0, 512, 4096, 2 ** 20]),
      maxThreadsPerBlock: Math.min(registerLimit, pick([1024, 1024, 256, 128, 96])),
      maxDynamicSharedSizeBytes: Math.max(0, device.sharedPerBlock - sharedSizeBytes),
    };
    const config: LaunchConfig = {
      grid: [dim(device.maxGridDim[0]!), dim(device.maxGridDim[1]!), pick([1, 1, dim(device.maxGridDim[2]!)])] as Dim3,
      block: [dim(device.maxBlockDim[0]!), pick([1, 1, dim(device.maxBlockDim[1]!)]), pick([1, 1, dim(device.maxBlockDim[2]!)])] as Dim3,
      sharedBytes: pick([0, 1, 48 * 1024, 48 * 1024 + 1, 100_000, 232448, 232449, int(0, 300_000)]),
      cooperative: rand() < 0.1,
      cluster: rand() < 0.1 ? ([pick([1, 2, 3, 4, 8, 16, 32]), 1, 1] as Dim3) : null,
      raisesDynamicSharedLimit: rand() < 0.5,
    };
    const v = validateLaunch(device, kernel, config);
    const errors = v.findings.filter((f) => f.severity === 'error');
    for (const f of v.findings) {
      if (/(^|[^\w-])-\d/.test(`${f.message} ${f.fix ?? ''}`)) failures.push(`${f.rule}: a negative number in "${f.message} ${f.fix}"`);
      if (f.severity === 'error' && CONFIG_RULES_WITHOUT_LAUNCH_FIX.has(f.rule) && f.suggested)
        failures.push(`${f.rule}: suggests a launch change it cannot fix`);
      if (!f.suggested) continue;
      suggestions++;
      for (const problem of within(device, f.suggested)) failures.push(`${f.rule}: ${problem} (config ${JSON.stringify(config)})`);
      // Taking one finding's suggestion must not break another field.
      const applied = validateLaunch(device, kernel, { ...config, ...f.suggested });
      const fields = Object.keys(f.suggested).map((k) => (k === 'sharedBytes' ? 'sharedBytes' : k));
      for (const e of applied.findings.filter((x) => x.severity === 'error' && x.rule === f.rule && fields.includes(x.field)))
        failures.push(`${f.rule}: still fails after its own suggestion ${JSON.stringify(f.suggested)}: ${e.message}`);
    }
    // All error suggestions together give a launch with no error that a launch change could fix.
    const together = Object.assign({}, ...errors.map((f) => f.suggested ?? {})) as Partial<LaunchConfig>;
    if (errors.some((f) => f.suggested)) {
      const after = validateLaunch(device, kernel, { ...config, ...together, grid: together.grid ?? config.grid, block: together.block ?? config.block });
      for (const e of after.findings.filter(
        (x) => x.severity === 'error' && !CONFIG_RULES_WITHOUT_LAUNCH_FIX.has(x.rule) && x.rule !== 'cooperative-fit' && x.rule !== 'cluster-divides-grid',
      ))
        if (errors.some((x) => x.rule === e.rule && x.suggested)) failures.push(`${e.rule} remains after every suggestion was applied: ${e.message}`);
    }
    if (failures.length > 20) break;
  }
  assert.deepEqual(failures.slice(0, 20), []);
  assert.ok(suggestions > 10_000, `${suggestions} suggestions checked`);
});
