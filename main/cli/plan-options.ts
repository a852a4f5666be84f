import { basename, resolve } from 'node:path';

import type { Command } from 'commander';

import { parseDim3 } from '../../core/dims';
import { parseArg, planFromArgs, type ParsedArg } from '../../core/plan/arg-syntax';
import { readPlanFile, readTextFile } from '../services/plan-files';
import { loadSample } from '../services/sample-service';
import { fromUserFile, intOption, repeatable, UsageError } from './cli-support';

/** The options that name a plan (a file with launch flags, a plan file, a sample), shared by run, sanitize and validate. */
export function withPlanOptions(command: Command): Command {
  return command
    .option('--kernel <name>', 'with a .cu file: the __global__ function to launch')
    .option('--grid <X[,Y,Z]>', 'grid dimensions in blocks', '1')
    .option('--block <X[,Y,Z]>', 'block dimensions in threads', '1')
    .option('--smem <bytes>', 'dynamic shared memory per block', intOption('--smem', 0, 0xffffffff), 0)
    .option('--arg <spec>', 'a kernel argument, in order: name:type[count]=init or name:type=value (repeatable)', repeatable, [] as string[])
    .option('--plan <plan.json>', 'a launch plan file instead of a file and flags')
    .option('--sample <name>', 'a failure-gallery sample (see `gpu-workbench samples`)')
    .option('--fixed', 'with --sample: its fixed variant instead of the broken one')
    .option('--device <n>', 'device ordinal', intOption('--device', 0, 1023), 0)
    .option('--arch <sm_XX>', 'compile for this architecture instead of the device’s own')
    .option('--warmup <n>', 'untimed launches before the timed ones', intOption('--warmup', 0, 10000), 0)
    .option('--repeat <n>', 'timed launches (min/median/max reported)', intOption('--repeat', 1, 10000), 1);
}

export interface PlanOptions {
  arch?: string;
  kernel?: string;
  grid: string;
  block: string;
  smem: number;
  arg: string[];
  plan?: string;
  sample?: string;
  fixed?: boolean;
  device: number;
  warmup: number;
  repeat: number;
}

/** The plan a command names: a plan file, a gallery sample, or a source file with launch flags (run and sanitize share this). */
export async function gatherPlan(
  file: string | undefined,
  opts: PlanOptions,
): Promise<{ plan: unknown; planPath: string | null; sampleTimeoutMs: number | null }> {
  if ([file, opts.plan, opts.sample].filter(Boolean).length > 1) throw new UsageError('Give one of a source file, --plan or --sample.');
  if (opts.fixed && !opts.sample) throw new UsageError('--fixed goes with --sample.');
  if (opts.plan) {
    const planPath = resolve(opts.plan);
    return { plan: (await fromUserFile(() => readPlanFile(planPath))).plan, planPath, sampleTimeoutMs: null };
  }
  if (opts.sample) {
    const sample = await fromUserFile(() => loadSample(opts.sample!, opts.fixed ? 'fixed' : 'broken'));
    return { plan: sample.plan, planPath: sample.planPath, sampleTimeoutMs: sample.manifest.timeoutMs ?? null };
  }
  if (!file) throw new UsageError('Give a .cu file to run (or --plan plan.json, or --sample NAME).');
  if (!opts.kernel) throw new UsageError('Name the kernel to launch with --kernel NAME.');
  const grid = parseDim3(opts.grid, '--grid');
  if (!grid.ok) throw new UsageError(grid.error);
  const block = parseDim3(opts.block, '--block');
  if (!block.ok) throw new UsageError(block.error);
  const args: ParsedArg[] = [];
  for (const spec of opts.arg) {
    const parsed = parseArg(spec);
    if (!parsed.ok) throw new UsageError(parsed.error);
    args.push(parsed.value);
  }
  const names = args.map((a) => (a.kind === 'buffer' ? a.buffer.name : a.name));
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) throw new UsageError(`--arg name "${duplicate}" is used twice; each argument needs its own name.`);
  const source = await fromUserFile(() => readTextFile(file, 'Source file'));
  const plan = planFromArgs({
    source,
    sourceName: basename(file),
    kernel: opts.kernel,
    grid: grid.value,
    block: block.value,
    sharedBytes: opts.smem,
    args,
    device: opts.device,
    warmup: opts.warmup,
    repeats: opts.repeat,
  });
  return { plan, planPath: null, sampleTimeoutMs: null };
}
