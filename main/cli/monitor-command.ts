/**
 * `gpu-workbench monitor [--pid P | -- <command> [args…]] [--interval MS] [--duration S] [--csv FILE] [--trace FILE] [--json]`:
 * samples every GPU's memory, and each process's, through NVML (no CUDA context, no kernel of ours) while a
 * program runs — one it starts, one already running, or none (the whole device) — and says per device the
 * baseline, the peak and the end, and per process its peak and growth, with flags and what to do.
 */
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

import { type Command, InvalidArgumentError } from 'commander';

import type { MemorySample } from '../../core/memory/samples';
import { MAX_INTERVAL_MS, MIN_INTERVAL_MS } from '../memory/memory-sampler';
import { CommandNotFoundError, locateProgram } from '../memory/monitored-command';
import { MAX_TRACE_SAMPLES, writeMonitorCsv, writeMonitorTrace } from '../memory/monitor-export';
import { runMonitorSession, type MonitorTargetSpec } from '../memory/monitor-session';
import { TraceTooLargeError } from '../memory/write-trace';
import { NvmlUnavailableError, openNvmlSource } from '../memory/nvml-source';
import { signalGroup } from '../process/launcher';
import { processRuns } from '../process/process-state';
import { EXIT } from './exit-codes';
import { renderMonitorReport, renderProgressLine } from './render-monitor';

/** Seven days: a duration past it is a typo. */
const MAX_DURATION_S = 7 * 86_400;
/** The largest pid Linux hands out (pid_max's ceiling, 2^22). */
const MAX_PID = 4_194_304;

interface MonitorOptions {
  pid?: number;
  interval: number;
  processInterval?: number;
  duration?: number;
  csv?: string;
  trace?: string;
  json?: boolean;
  samples?: boolean;
  processes: boolean;
}

class MonitorUsageError extends Error {}

const whole = (name: string, min: number, max: number) => (value: string) => {
  if (!/^\d+$/.test(value.trim())) throw new InvalidArgumentError(`${name} must be a whole number`);
  const n = Number(value);
  if (n < min || n > max) throw new InvalidArgumentError(`${name} must be between ${min} and ${max}`);
  return n;
};

const seconds = (value: string) => {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(n > 0) || n > MAX_DURATION_S)
    throw new InvalidArgumentError(`--duration is seconds, more than 0 and at most ${MAX_DURATION_S} (7 days)`);
  return n;
};

/** A file the user names for output: its folder must exist, and it must not be a folder itself. */
async function checkOutputPath(path: string, flag: string): Promise<string> {
  const full = resolve(path);
  const folder = await stat(dirname(full)).catch(() => null);
  if (!folder?.isDirectory()) throw new MonitorUsageError(`${flag} ${path}: the folder ${dirname(full)} does not exist.`);
  const existing = await stat(full).catch(() => null);
  if (existing?.isDirectory()) throw new MonitorUsageError(`${flag} ${path} is a folder; give a file name.`);
  return full;
}

async function monitor(args: string[], opts: MonitorOptions, hasCommand: boolean): Promise<number> {
  if (args.length && !hasCommand) throw new MonitorUsageError(`Put the command to monitor after --: gpu-workbench monitor -- ${args.join(' ')}`);
  if (hasCommand && !args.length) throw new MonitorUsageError('Nothing after --: give the command to monitor (gpu-workbench monitor -- python3 train.py).');
  if (hasCommand && opts.pid !== undefined) throw new MonitorUsageError('Give --pid or a command after --, not both.');
  if (opts.samples && !opts.json) throw new MonitorUsageError('--samples goes with --json (it puts the samples in the JSON).');
  if (opts.processInterval !== undefined && !opts.processes) throw new MonitorUsageError('--process-interval and --no-processes contradict each other.');
  if (opts.processInterval !== undefined && opts.processInterval < opts.interval)
    throw new MonitorUsageError(`--process-interval (${opts.processInterval} ms) cannot be shorter than --interval (${opts.interval} ms).`);
  const csvPath = opts.csv ? await checkOutputPath(opts.csv, '--csv') : null;
  const tracePath = opts.trace ? await checkOutputPath(opts.trace, '--trace') : null;
  const cwd = process.cwd();
  let target: MonitorTargetSpec = { kind: 'device' };
  if (hasCommand) {
    locateProgram(args[0]!, cwd);
    target = { kind: 'command', argv: args, cwd, stdoutToStderr: !!opts.json };
  } else if (opts.pid !== undefined) {
    if (!processRuns(opts.pid)) throw new MonitorUsageError(`No process with PID ${opts.pid} is running here.`);
    target = { kind: 'pid', pid: opts.pid };
  }

  // Monitoring without NVML shows nothing: said before a command is started, so none is left behind.
  let source;
  try {
    source = await openNvmlSource();
  } catch (error) {
    if (!(error instanceof NvmlUnavailableError)) throw error;
    const p = error.problem;
    if (opts.json) console.log(JSON.stringify({ ok: false, problem: p }, null, 2));
    else console.error([`✗ ${p.title}`, `  ${p.detail}`, `  What to do: ${p.remedy}`, ...(p.searched ?? []).map((s) => `    searched ${s}`)].join('\n'));
    return EXIT.unavailable;
  }

  const controller = new AbortController();
  let targetPid: number | null = null;
  let interrupts = 0;
  const interrupt = () => {
    interrupts++;
    if (interrupts === 1) {
      console.error(hasCommand ? '\nStopping the command (SIGTERM to its process group; Ctrl-C again to kill it now)…' : '\nStopping…');
      controller.abort();
    } else if (targetPid !== null && hasCommand) {
      signalGroup(targetPid, 'SIGKILL');
    }
  };
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const s of signals) process.on(s, interrupt);

  const duration = opts.duration ? ` for ${opts.duration} s` : hasCommand || opts.pid !== undefined ? '' : ' until Ctrl-C';
  console.error(
    `Monitoring ${source.devices.map((d) => `GPU ${d.index} (${d.name})`).join(', ')} every ${opts.interval} ms${duration}${hasCommand ? `, running: ${args.join(' ')}` : opts.pid !== undefined ? `, following PID ${opts.pid}` : ''}.`,
  );
  let first: MemorySample | null = null;
  let lastLine = 0;
  const startedUs = Date.now() * 1000;
  try {
    const outcome = await runMonitorSession(source, {
      target,
      intervalMs: opts.interval,
      ...(opts.processInterval !== undefined ? { processIntervalMs: opts.processInterval } : {}),
      includeProcesses: opts.processes,
      durationS: opts.duration ?? null,
      signal: controller.signal,
      includeSamples: !!opts.samples,
      onTarget: (pid) => (targetPid = pid),
      onEvent: (event) => {
        if (event.kind === 'problem') console.error(`! ${event.text}`);
        if (event.kind !== 'batch') return;
        const latest = event.batch.latest;
        first ??= event.batch.first;
        if (!latest || !first || performance.now() - lastLine < 1000) return;
        lastLine = performance.now();
        console.error(renderProgressLine(latest, first, startedUs, targetPid));
      },
    });
    const { report } = outcome;
    let exportFailed = false;
    if (csvPath) {
      const { samples } = await writeMonitorCsv(csvPath, report, outcome.store);
      console.error(`Wrote ${samples} samples to ${csvPath}.`);
    }
    if (tracePath) {
      try {
        const title = report.target ? `Monitor: ${report.target.command ?? `PID ${report.target.pid}`}` : 'Monitor: GPU memory';
        const t = await writeMonitorTrace(tracePath, report, outcome.store, title);
        console.error(
          `Wrote ${tracePath} (${t.events} events${t.leftOut ? `; the newest ${MAX_TRACE_SAMPLES} samples, ${t.leftOut} older ones left out` : ''}): open it in https://ui.perfetto.dev or chrome://tracing.`,
        );
      } catch (error) {
        if (!(error instanceof TraceTooLargeError)) throw error;
        console.error(`✗ ${error.message}`);
        exportFailed = true;
      }
    }
    console.log(opts.json ? JSON.stringify(report, null, 2) : renderMonitorReport(report));
    const exit = report.target?.exit;
    const commandFailed = report.end.kind === 'target-exited' && !!exit && (exit.code !== 0 || exit.signal !== null);
    const code = report.end.kind === 'failed' || commandFailed || exportFailed ? EXIT.failed : EXIT.ok;
    if (outcome.callInFlight) {
      // An NVML call that never returns holds a libuv thread, and with it the process: leave on purpose.
      console.error('! An NVML call had not returned when monitoring ended (a wedged driver?): exiting without waiting for it.');
      process.exit(code);
    }
    return code;
  } finally {
    for (const s of signals) process.off(s, interrupt);
  }
}

/** `gpu-workbench monitor`, added to the program. */
export function registerMonitorCommand(program: Command): void {
  program
    .command('monitor')
    .description(
      'Sample every GPU’s memory and each process’s through NVML (no CUDA context) while a program runs: a command it starts (after --), a process it follows (--pid), or the whole device. Prints per GPU the baseline, the peak and when, the end; per process its peak and growth (a leak grows steadily), and flags processes that exited but still hold memory, that this container cannot see, or that nothing you run started. Exit 2 without NVML; 1 when the command fails (or the trace would be too large to open).',
    )
    .usage('[options] [--pid P | -- <command> [args...]]')
    .argument('[command...]', 'after --: the program to start and monitor, and its arguments (python3 train.py, ./app, …)')
    .option('--pid <P>', 'follow a process already running (and show the others) until it exits', whole('--pid', 1, MAX_PID))
    .option(
      '--interval <ms>',
      `sample every this many milliseconds (${MIN_INTERVAL_MS} to ${MAX_INTERVAL_MS})`,
      whole('--interval', MIN_INTERVAL_MS, MAX_INTERVAL_MS),
      100,
    )
    .option(
      '--process-interval <ms>',
      'list processes at most this often (default: at every sample)',
      whole('--process-interval', MIN_INTERVAL_MS, MAX_INTERVAL_MS),
    )
    .option('--no-processes', 'device memory only: do not list processes')
    .option('--duration <s>', 'stop after this many seconds (a command still running is stopped); default: until it ends, or Ctrl-C', seconds)
    .option('--csv <file>', 'write every sample kept to a CSV file (one row per sample and GPU, a column per process)')
    .option('--trace <file>', 'write the session as a Chrome trace (opens in Perfetto and chrome://tracing): each GPU and each process as a counter track')
    .option('--json', 'machine-readable output: the report (the samples only with --samples); the command’s own output goes to standard error')
    .option('--samples', 'with --json: include the samples (the newest 100,000)')
    .action(async (args: string[], opts: MonitorOptions, command: Command) => {
      const rawArgs = (command.parent as (Command & { rawArgs?: string[] }) | null)?.rawArgs ?? [];
      try {
        process.exitCode = await monitor(args, opts, rawArgs.includes('--'));
      } catch (error) {
        if (error instanceof MonitorUsageError || error instanceof CommandNotFoundError) {
          console.error(`✗ ${error.message}`);
          process.exitCode = EXIT.usage;
          return;
        }
        throw error;
      }
    });
}
