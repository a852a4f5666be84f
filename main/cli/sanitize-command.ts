import { resolve } from 'node:path';

import type { Command } from 'commander';

import { SANITIZER_TOOLS, type SanitizerTool } from '../../core/sanitizer/findings';
import { isSanitizerTool, parseEnvAssignment, type SanitizerOptions } from '../../core/sanitizer/sanitizer-args';
import { sanitizePlan } from '../services/sanitize-plan-service';
import { SanitizerUnavailableError, sanitizeProgram } from '../tools/sanitize-program';
import { intOption, print, repeatable, UsageError, withWorkbench } from './cli-support';
import { EXIT } from './exit-codes';
import { gatherPlan, withPlanOptions, type PlanOptions } from './plan-options';
import { renderSanitize } from './render-sanitize';

/** `gpu-workbench sanitize`: a kernel or any program under compute-sanitizer, its findings one line per place. */
export function registerSanitizeCommand(program: Command): void {
  withPlanOptions(
    program
      .command('sanitize')
      .description(
        'Run a kernel (a .cu file with --kernel, --plan or --sample) or any program (after --) under compute-sanitizer, and say what it found, one line per place: file:line, threads, blocks, and for a kernel the buffer an address belongs to. Exit 1 when it finds something, 2 without compute-sanitizer.',
      )
      .usage('[options] (<file.cu> --kernel NAME … | --plan plan.json | --sample NAME | -- <command> [args...])')
      .argument('[args...]', 'a .cu file, or after --: the program and its arguments (python3 train.py, ./app, …)'),
  )
    .option('--tool <tool>', `${SANITIZER_TOOLS.join(', ')}`, 'memcheck')
    .option('--print-limit <n>', 'findings the tool prints at most (0: all)', intOption('--print-limit', 0, 10_000_000), 10_000)
    .option('--launch-timeout <s>', 'seconds one instrumented kernel may run', intOption('--launch-timeout', 1, 86_400), 60)
    .option('--timeout <s>', 'seconds the whole run may take before it is stopped', intOption('--timeout', 1, 86_400), 600)
    .option('--no-leak-check', 'memcheck: do not report device memory never freed')
    .option('--cwd <dir>', 'a program: the folder to run it in', '.')
    .option('--env <NAME=value>', 'a program: set a variable for it (repeat for more)', repeatable, [] as string[])
    .option('--json', 'machine-readable output')
    .action((args: string[], opts: SanitizeCommandOptions, command: Command) => {
      const rawArgs = (command.parent as (Command & { rawArgs?: string[] }) | null)?.rawArgs ?? [];
      return sanitize(args, opts, rawArgs.includes('--'));
    });
}

type SanitizeCommandOptions = PlanOptions & {
  tool: string;
  printLimit: number;
  launchTimeout: number;
  timeout: number;
  leakCheck: boolean;
  cwd: string;
  env: string[];
  json?: boolean;
};

/** The tool's settings from the command line (the tool itself is named apart). */
type ToolSettings = Omit<SanitizerOptions, 'tool'>;

/** A kernel (a .cu file, --plan, --sample) or a program (after --) under the tool; Ctrl-C stops it and says what was found. */
async function sanitize(args: string[], opts: SanitizeCommandOptions, program: boolean): Promise<void> {
  if (!isSanitizerTool(opts.tool)) throw new UsageError(`--tool must be one of ${SANITIZER_TOOLS.join(', ')}, not "${opts.tool}".`);
  const tool = opts.tool;
  const options: ToolSettings = { printLimit: opts.printLimit, launchTimeoutS: opts.launchTimeout, leakCheck: opts.leakCheck };
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  try {
    if (program) await sanitizeCommand(tool, args, opts, options, controller.signal);
    else await sanitizeKernel(tool, args, opts, options, controller.signal);
  } catch (error) {
    if (!(error instanceof SanitizerUnavailableError)) throw error;
    console.error(`✗ ${error.message}`);
    process.exitCode = EXIT.unavailable;
  } finally {
    process.off('SIGINT', interrupt);
  }
}

async function sanitizeCommand(tool: SanitizerTool, args: string[], opts: SanitizeCommandOptions, options: ToolSettings, signal: AbortSignal): Promise<void> {
  if (opts.plan || opts.sample || opts.kernel) throw new UsageError('Give a program after --, or a kernel (a .cu file, --plan or --sample), not both.');
  const env: Record<string, string> = {};
  for (const assignment of opts.env) {
    const parsed = parseEnvAssignment(assignment);
    if (!parsed) throw new UsageError(`--env takes NAME=value (a name of letters, digits and _), not "${assignment}".`);
    env[parsed.name] = parsed.value;
  }
  const report = await sanitizeProgram({ tool, command: args, cwd: resolve(opts.cwd), env, options, timeoutMs: opts.timeout * 1000, signal });
  print(!!opts.json, report, () => renderSanitize(report));
  process.exitCode = report.verdict === 'clean' ? EXIT.ok : EXIT.failed;
}

async function sanitizeKernel(tool: SanitizerTool, args: string[], opts: SanitizeCommandOptions, options: ToolSettings, signal: AbortSignal): Promise<void> {
  if (args.length > 1) throw new UsageError(`One .cu file at most (got ${args.join(' ')}); a program goes after --.`);
  if (opts.env.length) throw new UsageError('--env is for a program run after --.');
  const { plan, planPath } = await gatherPlan(args[0], opts);
  const { outcome, report } = await withWorkbench((workbench) =>
    sanitizePlan({ plan, planPath, tool, options, timeoutMs: opts.timeout * 1000, arch: opts.arch, signal }, workbench.compiler),
  );
  print(!!opts.json, { report, run: outcome }, () => `${renderSanitize(report)}\n\nThe run itself: ${outcome.diagnosis.headline}`);
  process.exitCode =
    outcome.status === 'unavailable' ? EXIT.unavailable : outcome.status === 'invalid' ? EXIT.usage : report.verdict === 'clean' ? EXIT.ok : EXIT.failed;
}
