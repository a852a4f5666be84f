import { basename, resolve } from 'node:path';

import type { Command } from 'commander';

import { compileOptionsSchema } from '../../core/compile/compile-options';
import { smArch, type DeviceInfo } from '../../core/devices';
import { parseDim3 } from '../../core/dims';
import { deviceLimits, makeProfile, type DeviceProfile } from '../../core/validate/device-limits';
import { kernelLimitsFromFacts } from '../../core/validate/kernel-limits';
import { validateLaunch } from '../../core/validate/validate-launch';
import { listDevices } from '../services/device-service';
import { completeKernelFacts } from '../services/kernel-facts-service';
import { readTextFile } from '../services/plan-files';
import { loadProfileFile } from '../services/profile-service';
import type { Workbench } from '../workbench';
import { fromUserFile, intOption, print, UsageError, withWorkbench } from './cli-support';
import { EXIT } from './exit-codes';
import { gatherPlan } from './plan-options';
import { renderCompile } from './render-compile';
import { renderValidation } from './render-validation';
import { validatePlan } from './validate-plan-command';

/** `gpu-workbench validate`: one launch (a .cu file with --kernel) or a whole plan (--plan, --sample) against a device’s limits. */
export function registerValidateCommand(program: Command): void {
  program
    .command('validate')
    .description(
      'Check a launch configuration against a device’s limits before launching: which limit, by how much, the error it would cause, and the fix; occupancy and its limiter. With --plan or --sample, the whole plan: every launch, and every buffer against the device’s memory and the host’s.',
    )
    .usage('[options] (<file.cu> --kernel NAME … | --plan plan.json | --sample NAME [--fixed])')
    .argument('[file.cu]', 'CUDA C++ source file')
    .option('--kernel <name>', 'with a .cu file: the __global__ function')
    .option('--plan <plan.json>', 'check a whole launch plan instead of one launch')
    .option('--sample <name>', 'check a failure-gallery sample’s plan')
    .option('--fixed', 'with --sample: its fixed variant')
    .option('--grid <X[,Y,Z]>', 'grid dimensions in blocks', '1')
    .option('--block <X[,Y,Z]>', 'block dimensions in threads', '1')
    .option('--smem <bytes>', 'dynamic shared memory per block', intOption('--smem', 0, 0xffffffff), 0)
    .option('--profile <file.json>', 'validate against a saved device profile (e.g. profiles/nvidia-h200.json)')
    .option('--device <n>', 'validate against this machine’s device', intOption('--device', 0, 1023))
    .option('--cluster <X[,Y,Z]>', 'thread block cluster dimensions (Hopper and later)')
    .option('--cooperative', 'a cooperative launch (grid.sync())')
    .option('--no-opt-in', 'do not assume the dynamic shared memory limit is raised (a host program that never calls cudaFuncSetAttribute)')
    .option('--json', 'machine-readable output')
    .action((file: string | undefined, opts: ValidateCommandOptions) => withWorkbench((workbench) => validate(workbench, file, opts)));
}

interface ValidateCommandOptions {
  kernel?: string;
  grid: string;
  block: string;
  smem: number;
  profile?: string;
  device?: number;
  cluster?: string;
  cooperative?: boolean;
  optIn: boolean;
  json?: boolean;
  plan?: string;
  sample?: string;
  fixed?: boolean;
}

async function validate(workbench: Workbench, file: string | undefined, opts: ValidateCommandOptions): Promise<void> {
  if (opts.plan || opts.sample) {
    if (file || opts.kernel) throw new UsageError('Give a .cu file with --kernel, or --plan, or --sample: one of them.');
    const { plan, planPath } = await gatherPlan(undefined, { ...opts, arg: [], device: 0, warmup: 0, repeat: 1, kernel: undefined });
    const target = await launchTarget(opts);
    if (target) process.exitCode = await validatePlan(workbench, plan, planPath, target, !!opts.json);
    return;
  }
  if (!file) throw new UsageError('Give a .cu file to check a launch of (or --plan plan.json, or --sample NAME).');
  if (!opts.kernel) throw new UsageError('Name the kernel to check with --kernel NAME.');
  const kernelName = opts.kernel;
  const grid = parseDim3(opts.grid, '--grid');
  if (!grid.ok) throw new UsageError(grid.error);
  const block = parseDim3(opts.block, '--block');
  if (!block.ok) throw new UsageError(block.error);
  const cluster = opts.cluster ? parseDim3(opts.cluster, '--cluster') : null;
  if (cluster && !cluster.ok) throw new UsageError(cluster.error);
  const target = await launchTarget(opts);
  if (!target) return;
  const { profile } = target;
  const source = await fromUserFile(() => readTextFile(file, 'Source file'));
  const arch = smArch(profile.device);
  const compiled = await workbench.compiler.compile({ source, sourceName: basename(file), options: compileOptionsSchema.parse({ arch }), backend: 'auto' });
  const result = opts.profile ? compiled : await completeKernelFacts(compiled, workbench.pool);
  if (!result.ok) {
    console.log(renderCompile(result, basename(file)));
    process.exitCode = EXIT.failed;
    return;
  }
  const facts = result.kernels.find((k) => k.name === kernelName);
  if (!facts)
    throw new UsageError(
      `No kernel named "${kernelName}" in ${basename(file)}. The kernels in it are: ${result.kernels.map((k) => k.name).join(', ') || 'none'}.`,
    );
  const kernel = kernelLimitsFromFacts(facts, deviceLimits(profile.device), source);
  if (!kernel) {
    console.error(
      `✗ The compiler did not report ${kernelName}'s registers and shared memory, and no GPU is here to ask. Compile with nvcc (--backend is automatic when NVRTC is absent) or run on the GPU machine.`,
    );
    process.exitCode = EXIT.unavailable;
    return;
  }
  const validation = validateLaunch(deviceLimits(profile.device), kernel, {
    grid: grid.value,
    block: block.value,
    sharedBytes: opts.smem,
    cluster: cluster?.ok ? cluster.value : null,
    cooperative: !!opts.cooperative,
    raisesDynamicSharedLimit: opts.optIn,
  });
  print(!!opts.json, { device: profile.device.name, kernel: facts.display, limits: kernel, ...validation }, () =>
    renderValidation(validation, profile.device.name, facts.display, { grid: grid.value, block: block.value, sharedBytes: opts.smem }),
  );
  process.exitCode = validation.ok ? EXIT.ok : EXIT.failed;
}

/**
 * What `validate` checks against: a saved profile (--profile), or this machine's device (--device, default 0) with
 * the device itself for what only it can say (free memory, resources the compiler did not report). Null, said and
 * exit 2, when there is no device here and no profile was given.
 */
async function launchTarget(opts: { profile?: string; device?: number }): Promise<{ profile: DeviceProfile; device: DeviceInfo | null } | null> {
  if (opts.profile && opts.device !== undefined) throw new UsageError('Give --profile or --device, not both.');
  if (opts.profile) {
    try {
      return { profile: await loadProfileFile(resolve(opts.profile)), device: null };
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  const devices = await listDevices();
  if (!devices.ok) {
    console.error(
      `✗ ${devices.problem.title}: pass --profile to validate against a saved device (this checkout ships profiles/nvidia-h100.json and nvidia-h200.json).`,
    );
    process.exitCode = EXIT.unavailable;
    return null;
  }
  const device = devices.devices.find((d) => d.ordinal === (opts.device ?? 0));
  if (!device) throw new UsageError(`There is no device ${opts.device}: this machine has ${devices.devices.length}.`);
  return { profile: makeProfile(device, devices.driverVersion, new Date().toISOString()), device };
}
