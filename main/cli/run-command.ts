import type { Command } from 'commander';

import { isPlanRefused } from '../services/plan-check-service';
import { intOption, print, UsageError, withWorkbench } from './cli-support';
import { EXIT } from './exit-codes';
import { gatherPlan, withPlanOptions, type PlanOptions } from './plan-options';
import { renderRun } from './render-run';

/** `run --trace` samples device memory this often while the run goes. */
const TRACE_SAMPLE_INTERVAL_MS = 10;

/** `gpu-workbench run`: a kernel compiled and run once, through the same run path as the app, with its diagnosis. */
export function registerRunCommand(program: Command): void {
  withPlanOptions(
    program
      .command('run')
      .description('Compile a kernel and run it once, with buffers and scalars given by --arg (or a plan file with --plan).')
      .argument('[file.cu]', 'CUDA C++ source file'),
  )
    .option('--timeout <ms>', 'watchdog: kill the runner if the run takes longer', intOption('--timeout', 100, 3_600_000), 30_000)
    .option('--no-determinism-check', 'do not run the launches a second time to compare the results bit for bit')
    .option('--no-validate', 'send the plan to the driver even when the validator says a launch or an allocation would fail (to see what the driver says)')
    .option(
      '--determinism-runs <n>',
      'extra runs compared bit for bit with the first (default 1, when the buffers total ≤ 256 MiB)',
      intOption('--determinism-runs', 1, 16),
    )
    .option('--trace <file>', "write the run's event log as Chrome Trace Event JSON (Perfetto, chrome://tracing)")
    .option('--json', 'machine-readable output')
    .action((file: string | undefined, opts: RunCommandOptions, command: Command) =>
      runOnce(file, opts, command.getOptionValueSource('timeout') === 'default'),
    );
}

type RunCommandOptions = PlanOptions & {
  determinismCheck: boolean;
  determinismRuns?: number;
  timeout: number;
  json?: boolean;
  trace?: string;
  validate: boolean;
};

async function runOnce(file: string | undefined, opts: RunCommandOptions, timeoutIsDefault: boolean): Promise<void> {
  if (!opts.determinismCheck && opts.determinismRuns !== undefined)
    throw new UsageError('--no-determinism-check and --determinism-runs contradict each other: give one.');
  const determinismRuns = opts.determinismCheck ? opts.determinismRuns : 0;
  const { plan, planPath, sampleTimeoutMs } = await gatherPlan(file, opts);
  const timeout = sampleTimeoutMs && timeoutIsDefault ? sampleTimeoutMs : opts.timeout;
  const outcome = await withWorkbench((workbench) =>
    workbench.runPlan(plan, {
      timeoutMs: timeout,
      arch: opts.arch,
      planPath,
      // The whole plan checked on the device first, as in the UI: a launch or an allocation that would fail is refused.
      validate: opts.validate,
      ...(determinismRuns !== undefined ? { determinismRuns } : {}),
      // A trace carries the device and each process beside the run's own events.
      ...(opts.trace ? { sampleIntervalMs: TRACE_SAMPLE_INTERVAL_MS } : {}),
    }),
  );
  print(!!opts.json, outcome, () => renderRun(outcome));
  if (outcome.status === 'invalid' && isPlanRefused(outcome.problem))
    console.error('Nothing ran. To send the plan to the driver anyway and see what it says, run again with --no-validate.');
  if (opts.trace) {
    const { renderRunTrace, writeRunTrace } = await import('./run-trace');
    const trace = await writeRunTrace(outcome, opts.trace, outcome.samples ?? null);
    if (outcome.samplingProblem) console.error(`Device memory was not sampled: ${outcome.samplingProblem}`);
    // stderr: --json's stdout stays the outcome alone.
    console.error(renderRunTrace(trace));
    if ('notWritten' in trace && outcome.result) process.exitCode = EXIT.failed;
  }
  process.exitCode ??=
    outcome.status === 'unavailable'
      ? EXIT.unavailable
      : outcome.status === 'invalid'
        ? EXIT.usage
        : outcome.diagnosis.severity === 'error'
          ? EXIT.failed
          : EXIT.ok;
}
