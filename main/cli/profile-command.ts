import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import { compareProfiles } from '../../core/kernel-profile/profile-compare';
import type { Profile } from '../../core/kernel-profile/profile';
import { runReader, ReaderError } from '../readers/reader-process';
import { deviceInfos } from '../services/device-service';
import { profilePlan } from '../services/kernel-profile-service';
import type { Workbench } from '../workbench';
import type { DeviceInfo } from '../../core/devices';
import type { Command } from 'commander';

import { intOption, repeatable, UsageError, withWorkbench } from './cli-support';
import { profileProgramCommand, type ProgramProfileOptions } from './profile-program-command';
import { EXIT } from './exit-codes';
import { gatherPlan, withPlanOptions, type PlanOptions } from './plan-options';
import { renderComparison, renderProfile } from './render-profile';
import { renderRun } from './render-run';

export interface ProfileCommandOptions {
  step?: number;
  counters: boolean;
  save?: string;
  compare?: string;
  timeout: number;
  json?: boolean;
  device: number;
  arch?: string;
}

/** `gpu-workbench profile`: registered with the other commands. */
export function registerProfileCommand(program: Command): void {
  withPlanOptions(
    program
      .command('profile')
      .description(
        'Profile one launch of a kernel (a .cu file with --kernel, --plan or --sample) under Nsight Compute, and say what its numbers mean: sectors per request per source line, memory- or compute- or latency-bound, occupancy, where the warps wait. Without ncu or its counters: why, and the effective bandwidth. Exit 2 without a GPU.',
      )
      .usage('[options] (<file.cu> --kernel NAME … | --plan plan.json | --sample NAME | -- <command> [args...])')
      .argument('[args...]', 'a .cu file, or after --: the program and its arguments (python3 train.py, ./app, …)'),
  )
    .option('--step <n>', 'the plan step (1-based) whose launch to profile (default: the first launch)', intOption('--step', 1, 1_000_000))
    .option('--no-counters', 'do not run Nsight Compute: only the time and the effective bandwidth')
    .option('--save <profile.json>', 'save the profile (to compare with later, or to open in the app)')
    .option('--compare <profile.json>', 'a saved profile to compare with: each figure before and after')
    .option('--timeout <s>', 'seconds the profiled run may take', intOption('--timeout', 1, 86_400), 600)
    .option(
      '--launch-count <n>',
      'a program: the kernel launches to profile (with --kernel: a regular expression for their names)',
      intOption('--launch-count', 1, 1000),
      5,
    )
    .option('--launch-skip <n>', 'a program: the launches to let pass first', intOption('--launch-skip', 0, 1_000_000), 0)
    .option('--cwd <dir>', 'a program: the folder to run it in', '.')
    .option('--env <NAME=value>', 'a program: set a variable for it (repeat for more)', repeatable, [] as string[])
    .option('--json', 'machine-readable output')
    .action(async (args: string[], opts: PlanOptions & ProfileCommandOptions & ProgramProfileOptions, command: Command) => {
      const rawArgs = (command.parent as (Command & { rawArgs?: string[] }) | null)?.rawArgs ?? [];
      if (rawArgs.includes('--')) {
        if (opts.plan || opts.sample) throw new UsageError('Give a program after --, or a kernel (a .cu file, --plan or --sample), not both.');
        process.exitCode = await profileProgramCommand(args, opts);
        return;
      }
      if (args.length > 1) throw new UsageError(`One .cu file at most (got ${args.join(' ')}); a program goes after --.`);
      const { plan, planPath } = await gatherPlan(args[0], opts);
      process.exitCode = await profileCommand(plan, planPath, opts);
    });
}

/** A saved profile, read in a reader process (it is a file from outside). */
export async function readSavedProfile(path: string): Promise<Profile> {
  return (await runReader<Profile>({ kind: 'profile', path: resolve(path), maxBytes: 64 * 2 ** 20 }, path)).value;
}

/** `gpu-workbench profile`: the plan's launch under Nsight Compute, what its numbers mean, and a comparison with a saved profile. */
export async function profileCommand(plan: unknown, planPath: string | null, opts: ProfileCommandOptions): Promise<number> {
  let before: Profile | null = null;
  if (opts.compare) {
    try {
      before = await readSavedProfile(opts.compare);
    } catch (error) {
      if (!(error instanceof ReaderError)) throw error;
      console.error(`✗ ${error.message}`);
      return EXIT.usage;
    }
  }
  // Listed beside the run (its runner starts under ncu meanwhile), not before it: the profile needs it only at the end.
  const device = deviceInfos().then((devices) => (devices.ok ? (devices.devices[opts.device] ?? null) : null));
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  try {
    return await withWorkbench((workbench) => profileWith(workbench, plan, planPath, opts, device, controller.signal, before));
  } finally {
    process.off('SIGINT', interrupt);
  }
}

async function profileWith(
  workbench: Workbench,
  plan: unknown,
  planPath: string | null,
  opts: ProfileCommandOptions,
  device: Promise<DeviceInfo | null>,
  signal: AbortSignal,
  before: Profile | null,
): Promise<number> {
  {
    const { outcome, profile } = await profilePlan(
      {
        plan,
        planPath,
        step: opts.step === undefined ? null : opts.step - 1,
        arch: opts.arch,
        timeoutMs: opts.timeout * 1000,
        signal,
        device,
        noCounters: !opts.counters,
      },
      workbench,
    );
    if (profile && opts.save) await writeFile(resolve(opts.save), `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o644 });
    const comparison = profile && before ? compareProfiles(before, profile) : null;
    if (opts.json) console.log(JSON.stringify({ profile, comparison, run: outcome }, null, 2));
    else if (profile)
      console.log(
        [renderProfile(profile), ...(comparison ? ['', renderComparison(comparison)] : []), ...(opts.save ? [`Saved to ${opts.save}`] : [])].join('\n'),
      );
    else console.log(`${renderRun(outcome)}\n\n✗ Not profiled: the plan did not run to the end (above).`);
    if (!profile) return outcome.status === 'unavailable' ? EXIT.unavailable : outcome.status === 'invalid' ? EXIT.usage : EXIT.failed;
    return EXIT.ok;
  }
}
