import { stat, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

import type { Command } from 'commander';

import { CHECK_CONFIG_FILE } from '../../core/check/check-config';
import { VERDICT_EXIT, type CheckReport } from '../../core/check/check-model';
import { planHeading, reportLines } from '../../core/check/check-text';
import { junitXml } from '../../core/check/junit';
import type { DeviceProfile } from '../../core/validate/device-limits';
import { checkPlans } from '../services/check-service';
import {
  CheckConfigError,
  configNear,
  folderTargets,
  galleryTargets,
  loadCheckConfig,
  planFileTarget,
  sampleTargets,
  shownPath,
  type CheckTarget,
  type ChosenConfig,
} from '../services/check-targets';
import { loadProfileFile } from '../services/profile-service';
import { samplesRoot } from '../services/sample-service';
import { fromUserFile, UsageError, withWorkbench } from './cli-support';
import { EXIT } from './exit-codes';
import { gatherPlan, withPlanOptions, type PlanOptions } from './plan-options';

interface CheckCommandOptions extends PlanOptions {
  gallery?: boolean;
  config?: string;
  profile?: string;
  json?: boolean;
  junit?: string;
}

/** `gpu-workbench check`: every check on every plan named, one report. Registered with the other commands (cli.ts). */
export function registerCheckCommand(program: Command): void {
  withPlanOptions(
    program
      .command('check')
      .description(
        `Check everything, for one plan or many: the launch validator, a run with the determinism check, memcheck (with the leak check), racecheck, initcheck, synccheck, and the profile's coalescing and occupancy. Each check passed, failed with its finding, or could not run and why. Thresholds, checks and time limits from ${CHECK_CONFIG_FILE} beside the plans (or --config). Exit 0 when every check passed (for gallery samples: did what it should), 1 when one failed, 2 when nothing could run, 3 when nothing failed but some check could not run.`,
      )
      .usage('[options] (plan.json… | folder… | --sample NAME [--fixed] | --gallery | <file.cu> --kernel NAME …)')
      .argument('[targets...]', 'plan files, folders of plans or of gallery samples (samples/), or one .cu file with launch flags'),
  )
    .option('--gallery', 'the failure gallery: both variants of every sample')
    .option('--config <file>', `settings for every plan, instead of the ${CHECK_CONFIG_FILE} beside each`)
    .option('--profile <device.json>', 'check launches against a saved device profile (the validator runs without a GPU)')
    .option('--junit <file>', 'also write the report as JUnit XML, for CI systems')
    .option('--json', 'machine-readable output (the whole report)')
    .action((targets: string[], opts: CheckCommandOptions) => check(targets, opts));
}

const isFolder = (path: string) =>
  stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );

/** The one source file named with launch flags, as a plan. */
async function sourceTarget(file: string, opts: CheckCommandOptions, chosen: ChosenConfig | null): Promise<CheckTarget> {
  const { plan } = await gatherPlan(file, { ...opts, plan: undefined, sample: undefined, fixed: undefined });
  const { config, path: configPath } = chosen ?? (await configNear([dirname(resolve(file))]));
  return {
    label: `${shownPath(resolve(file))} --kernel ${opts.kernel}`,
    plan,
    planPath: null,
    readProblem: null,
    origin: { kind: 'source' },
    runTimeoutMs: null,
    expectedCheck: null,
    config,
    configPath,
  };
}

/** Every plan the command line names, in its order: --gallery, --sample, --plan, then each argument. */
async function gatherTargets(args: string[], opts: CheckCommandOptions, chosen: ChosenConfig | null): Promise<CheckTarget[]> {
  const sources = args.filter((a) => /\.cu$/i.test(a));
  if (sources.length > 1) throw new UsageError(`One .cu file at most, with its launch flags (got ${sources.join(', ')}); give the others as plan files.`);
  if (!sources.length && opts.kernel) throw new UsageError('--kernel goes with a .cu file.');
  if (opts.fixed && !opts.sample) throw new UsageError('--fixed goes with --sample.');
  const targets: CheckTarget[] = [];
  if (opts.gallery) targets.push(...(await galleryTargets(chosen)));
  if (opts.sample) {
    const found = await sampleTargets(samplesRoot(), chosen, { names: [opts.sample], variants: [opts.fixed ? 'fixed' : 'broken'] });
    if (!found.length) throw new UsageError(`There is no sample named "${opts.sample}". Run \`gpu-workbench samples\` for the list.`);
    targets.push(...found);
  }
  if (opts.plan) targets.push(await planFileTarget(opts.plan, chosen));
  for (const arg of args) {
    if (/\.cu$/i.test(arg)) targets.push(await sourceTarget(arg, opts, chosen));
    else if (await isFolder(arg)) targets.push(...(await folderTargets(arg, chosen)));
    else targets.push(await planFileTarget(arg, chosen));
  }
  if (!targets.length)
    throw new UsageError(
      'Give what to check: plan files, a folder of plans or of gallery samples, --sample NAME, --gallery, or a .cu file with --kernel NAME.',
    );
  return targets;
}

async function check(args: string[], opts: CheckCommandOptions): Promise<void> {
  let chosen: ChosenConfig | null = null;
  let profile: DeviceProfile | null = null;
  try {
    if (opts.config) chosen = await loadCheckConfig(opts.config);
    if (opts.profile) profile = await loadProfileFile(resolve(opts.profile));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const targets = await fromUserFile(() =>
    gatherTargets(args, opts, chosen).catch((error: unknown) => {
      throw error instanceof CheckConfigError ? new UsageError(error.message) : error;
    }),
  );
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  let report: CheckReport;
  try {
    // stderr: --json's stdout stays the report alone.
    console.error(`Checking ${targets.length === 1 ? '1 plan' : `${targets.length} plans`}…`);
    report = await withWorkbench((workbench) =>
      checkPlans(targets, workbench, {
        profile,
        arch: opts.arch,
        signal: controller.signal,
        onEvent: (event) => {
          if (event.kind === 'plan') console.error(`[${event.done}/${event.total}] ${planHeading(event.report)}`);
        },
      }),
    );
  } finally {
    process.off('SIGINT', interrupt);
  }
  console.log(opts.json ? JSON.stringify(report, null, 2) : reportLines(report, { details: true }).join('\n'));
  if (opts.junit) {
    const path = resolve(opts.junit);
    try {
      await writeFile(path, junitXml(report), { mode: 0o644 });
      console.error(`JUnit report written to ${shownPath(path)}.`);
    } catch (error) {
      console.error(`✗ The JUnit report could not be written to ${path}: ${(error as Error).message}`);
      process.exitCode = EXIT.failed;
      return;
    }
  }
  process.exitCode = VERDICT_EXIT[report.verdict];
}
