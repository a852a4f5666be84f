/**
 * `gpu-workbench diagnose [options] -- <command> [args…]`: the debugging workflow an expert runs by hand, for a
 * program the user did not write — the environment, a monitored run, the failure read from its output, then each
 * re-run the evidence calls for (blocking, memcheck, the allocator's history, the fault handler…) — as one report.
 */

import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

import { type Command, InvalidArgumentError } from 'commander';

import { reportLines } from '../../core/diagnose/report';
import { verdictSeverity } from '../../core/diagnose/verdict';
import { CommandNotFoundError } from '../memory/monitored-command';
import { DEFAULT_BUDGET_MS, diagnoseProgram, type DiagnoseEvent } from '../diagnose/diagnose-service';
import { EXIT } from './exit-codes';

/** A day: a budget past it is a typo. */
const MAX_BUDGET_MS = 86_400_000;

/** "90", "90s", "10m", "1.5h" → milliseconds. */
export function parseBudget(value: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|h)?$/.exec(value.trim());
  const ms = m ? Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 's' | 'm' | 'h'] : NaN;
  if (!(ms >= 1_000) || ms > MAX_BUDGET_MS) throw new InvalidArgumentError('--budget is a duration from 1 s to 24 h: 90, 90s, 10m or 1.5h');
  return ms;
}

function collectEnv(value: string, previous: Record<string, string>): Record<string, string> {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(value);
  if (!m) throw new InvalidArgumentError(`--env takes NAME=value (a name of letters, digits and _), not "${value.slice(0, 60)}"`);
  return { ...previous, [m[1]!]: m[2]! };
}

interface DiagnoseOptions {
  thorough?: boolean;
  budget: number;
  env: Record<string, string>;
  cwd?: string;
  json?: boolean;
  saveSnapshot?: string;
  bundle?: string;
  redact: boolean;
}

/**
 * The program's output, and each step as it starts and ends, on the terminal as they come. A step finished earlier
 * may say more later (the first run's monitor, the environment's Python probe): only what is new is printed, named
 * by its step.
 */
function progressPrinter(json: boolean) {
  const out = json ? process.stderr : process.stdout;
  const said = new Map<number, Set<string>>();
  let latest = -1;
  return (event: DiagnoseEvent) => {
    if (event.kind === 'output') out.write(event.text);
    else if (event.kind === 'step-started') {
      latest = event.index;
      process.stderr.write(`\n▶ ${event.index + 1}. ${event.step.title}${event.step.why ? `\n  ${event.step.why}` : ''}\n`);
    } else if (event.kind === 'step-finished') {
      const before = said.get(event.index) ?? new Set<string>();
      const fresh = event.step.findings.filter((f) => !before.has(f));
      for (const f of fresh) before.add(f);
      said.set(event.index, before);
      const from = event.index === latest ? '' : ` (${event.index + 1}. ${event.step.title})`;
      if (fresh.length) process.stderr.write(`${fresh.map((f) => `  ·${from} ${f}`).join('\n')}\n`);
    }
  };
}

async function diagnose(args: string[], opts: DiagnoseOptions, hasCommand: boolean): Promise<number> {
  if (!hasCommand || !args.length) {
    console.error('✗ Give the program after --: gpu-workbench diagnose -- python3 train.py');
    return EXIT.usage;
  }
  for (const [flag, path] of [
    ['--bundle', opts.bundle],
    ['--save-snapshot', opts.saveSnapshot],
  ] as const) {
    const folder = path ? await stat(dirname(resolve(path))).catch(() => null) : true;
    if (!folder || (folder !== true && !folder.isDirectory())) {
      console.error(`✗ ${flag} ${path}: the folder ${dirname(resolve(path!))} does not exist.`);
      return EXIT.usage;
    }
  }
  const controller = new AbortController();
  let interrupts = 0;
  const interrupt = () => {
    if (++interrupts === 1) {
      console.error('\nCancelling: the program is stopped (SIGTERM to its group, then SIGKILL), and the report says what was done.');
      controller.abort();
    } else process.exit(130);
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, interrupt);
  try {
    const report = await diagnoseProgram({
      argv: args,
      cwd: resolve(opts.cwd ?? process.cwd()),
      env: opts.env,
      thorough: !!opts.thorough,
      budgetMs: opts.budget,
      signal: controller.signal,
      onEvent: progressPrinter(!!opts.json),
      keepSnapshot: opts.saveSnapshot
        ? resolve(opts.saveSnapshot)
        : opts.bundle
          ? await (await import('../diagnose/diagnose-files')).snapshotKeepPath()
          : undefined,
    });
    if (opts.json) console.log(JSON.stringify(report, null, 2));
    else console.log(['', ...reportLines(report)].join('\n'));
    if (opts.bundle) {
      // Loaded only for --bundle: the bundle writer and its schemas are a fifth of the CLI's start-up.
      const { exportDiagnosisBundle } = await import('../bundle/diagnosis-bundle');
      const { BundleCancelledError, BundleWriteError } = await import('../bundle/write-bundle');
      try {
        const written = await exportDiagnosisBundle(report, resolve(opts.bundle), { redact: opts.redact });
        console.error(
          `\nBundle written: ${written.path} (${(written.bytes / 2 ** 20).toFixed(1)} MiB${opts.redact ? ', redacted' : ''}).${written.notes.map((n) => `\n  ${n}`).join('')}`,
        );
      } catch (error) {
        if (!(error instanceof BundleWriteError || error instanceof BundleCancelledError)) throw error;
        console.error(`✗ ${error.message}`);
        return EXIT.failed;
      }
    }
    const { level } = verdictSeverity(report.verdict.kind);
    return level === 'ok' ? EXIT.ok : level === 'warn' ? EXIT.unavailable : EXIT.failed;
  } finally {
    for (const s of signals) process.off(s, interrupt);
  }
}

/** `gpu-workbench diagnose`, added to the program. */
export function registerDiagnoseCommand(program: Command): void {
  program
    .command('diagnose')
    .description(
      'Diagnose a program that fails on the GPU (PyTorch, CuPy, ctypes, any CUDA program): checks the environment it will see, runs it as it is while watching every GPU process, reads the failure from its output, then re-runs it as the evidence calls for — with CUDA_LAUNCH_BLOCKING=1 for the true line of an asynchronous error, under memcheck for a memory fault, with PyTorch’s allocator history for an out-of-memory, with Python’s fault handler for a crash — and reports the verdict, your line, the kernel, the cause and what to do. Exit 0 when it ran cleanly, 1 when a failure was diagnosed, 2 when it could not finish.',
    )
    .usage('[options] -- <command> [args...]')
    .argument('[command...]', 'after --: the program and its arguments, passed as words (never through a shell)')
    .option('--thorough', 'after a clean exit, run memcheck (with leak check), racecheck and initcheck instead of offering them')
    .option(
      '--budget <duration>',
      `the whole diagnosis's time limit (default ${DEFAULT_BUDGET_MS / 60_000}m); what it leaves undone is said`,
      parseBudget,
      DEFAULT_BUDGET_MS,
    )
    .option('--env <NAME=value>', "set a variable in the program's environment (repeat for more)", collectEnv, {})
    .option('--cwd <dir>', 'run the program in this folder (default: here)')
    .option('--save-snapshot <file>', "keep the allocator history's snapshot (a PyTorch pickle: open it with gpu-workbench memory or in the Memory tab)")
    .option('--bundle <file.zip>', 'write the diagnosis as a bundle a colleague can open (the report, every run’s output, the snapshot, the doctor)')
    .option(
      '--no-redact',
      "keep user and host names, home folders, your own variables' values, credentials in the command line and other processes' command lines in the bundle (all hidden by default)",
    )
    .option('--json', "machine-readable report on standard output; the program's output and the steps go to standard error")
    .action(async (args: string[], opts: DiagnoseOptions, command: Command) => {
      const rawArgs = (command.parent as (Command & { rawArgs?: string[] }) | null)?.rawArgs ?? [];
      try {
        process.exitCode = await diagnose(args, opts, rawArgs.includes('--'));
      } catch (error) {
        if (error instanceof CommandNotFoundError || (error instanceof Error && /does not exist|No program/.test(error.message))) {
          console.error(`✗ ${error.message}`);
          process.exitCode = EXIT.usage;
          return;
        }
        throw error;
      }
    });
}
