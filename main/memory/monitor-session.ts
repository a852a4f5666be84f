import type { AbortLike } from '../../core/api/channels';
import type { SampleStore } from '../../core/memory/sample-store';
import { MAX_PROCESS_TRENDS } from '../../core/memory/sample-summary';
import { buildMonitorReport, type MonitorEnd, type MonitorReport, type MonitorTarget } from '../../core/memory/monitor-report';
import { processRuns } from '../process/process-state';
import { DescendantWatcher } from './descendant-watcher';
import { MemorySampler, MIN_BATCH_MS, type SamplerEvent, type SamplerOptions } from './memory-sampler';
import { MonitoredCommand } from './monitored-command';
import type { NvmlSource } from './nvml-source';
import { ProcReader } from './proc-reader';

/** After the monitored program ends, sampling goes on at least this long, to see whether its memory comes back… */
export const TAIL_AFTER_EXIT_MS = 1_000;
/** …and while NVML still lists it (or what it started), up to this long: past NORMAL_TEARDOWN_US it stays flagged. */
export const MAX_TAIL_AFTER_EXIT_MS = 6_000;
/** Samples a report carries at most when they are asked for (the newest). */
export const MAX_REPORTED_SAMPLES = 100_000;

export type MonitorTargetSpec =
  | { kind: 'device' }
  | { kind: 'pid'; pid: number }
  /** stdoutToStderr: the command's standard output goes to standard error (a --json report keeps standard output). */
  | { kind: 'command'; argv: string[]; cwd: string; stdoutToStderr?: boolean };

export interface MonitorSessionOptions extends Omit<SamplerOptions, 'targetPid' | 'proc'> {
  target: MonitorTargetSpec;
  /** Ends after this long; null or absent: until the target ends, or the signal. */
  durationS?: number | null;
  /** Stops the session (Ctrl-C, Stop, the caller cancelled); the report says 'stopped'. */
  signal?: AbortLike;
  /** Put the samples (the newest MAX_REPORTED_SAMPLES) in the report's series. */
  includeSamples?: boolean;
  /** Batches, problems and the failure as they come. */
  onEvent?: (event: SamplerEvent) => void;
  /** Called once the command has started (its pid), or the followed process is known. */
  onTarget?: (pid: number) => void;
  /** Called once sampling runs (after the baseline, and after a command has started). */
  onSampling?: () => void;
  /** Sampling goes on this long after the target ended (TAIL_AFTER_EXIT_MS by default); 0: it stops at the exit. */
  tailMs?: number;
  proc?: ProcReader;
}

/**
 * One monitoring session, for the CLI and the UI alike: samples the devices while the target runs (a command
 * it starts, a process it follows, or nothing: the whole device for a duration), then answers the report.
 * The baseline is sampled before a command starts; after the target ends sampling goes on briefly, so the
 * report shows whether its memory came back; a command still running at the end is stopped with its group.
 */
/** Samples on after the target ended: at least `minMs`, and while NVML lists it or its descendants, up to MAX_TAIL_AFTER_EXIT_MS. */
async function tail(sampler: MemorySampler, pid: number, minMs: number, signal?: AbortLike): Promise<void> {
  const started = performance.now();
  const ours = new Set([pid, ...[...sampler.tracker.relations()].flatMap(([p, r]) => (r === 'target-descendant' ? [p] : []))]);
  const stillListed = () => [...sampler.listedNow].some((p) => ours.has(p));
  const wanted = () => performance.now() - started < minMs || (stillListed() && performance.now() - started < Math.max(minMs, MAX_TAIL_AFTER_EXIT_MS));
  while (!signal?.aborted && wanted()) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** What went wrong on the way, for the report: the sampler's problems, and what the bounds and /proc left out. */
function problemsOf(sampler: MemorySampler, watcher: DescendantWatcher | null): string[] {
  const problems = [...sampler.problems];
  if (watcher?.unavailable) problems.push(watcher.unavailable);
  if (watcher?.log.dropped)
    problems.push(
      `The program ran more than ${watcher.log.max} processes at once: ${watcher.log.dropped} of its descendants were not recorded, so one of them that exited before NVML's listing of it was read may be unnamed.`,
    );
  if (sampler.tracker.untrackedCount)
    problems.push(`${sampler.tracker.untrackedCount} more processes were listed than the monitor follows; they are in the samples but not named.`);
  if (sampler.summary.untracked)
    problems.push(
      `More than ${MAX_PROCESS_TRENDS} processes came and went: ${sampler.summary.untracked} listings of later ones are left out of the per-process summary.`,
    );
  if (sampler.store.dropped)
    problems.push(`The oldest ${sampler.store.dropped} samples were left out of the series (it keeps ${sampler.store.length}); the summary still covers them.`);
  return problems;
}

export interface MonitorOutcome {
  report: MonitorReport;
  /** Every sample kept (for a CSV or a timeline), oldest first. */
  store: SampleStore;
  /** An NVML call is still running (a wedged driver): a CLI must exit on purpose rather than wait for it. */
  callInFlight: boolean;
}

export async function runMonitorSession(source: NvmlSource, options: MonitorSessionOptions): Promise<MonitorOutcome> {
  const proc = options.proc ?? new ProcReader();
  const followed = options.target.kind === 'pid' ? options.target.pid : null;
  const sampler = new MemorySampler(source, { ...options, targetPid: followed, proc });
  const startedAtUs = Date.now() * 1000;
  let target: MonitorTarget | null = null;
  // Follows the target's children on its own short period, so one gone before NVML's listing of it is read is still named.
  let watcher: DescendantWatcher | null = null;
  const watch = (pid: number, command: string | null): DescendantWatcher => {
    const w = new DescendantWatcher(pid, proc).start();
    sampler.tracker.followDescendants(w);
    sampler.tracker.setTarget(pid, command);
    return w;
  };
  if (followed !== null) {
    target = { pid: followed, command: await proc.cmdline(followed), startedByMonitor: false, exit: null, stoppedByMonitor: false, leftBehind: [] };
    sampler.tracker.setTarget(followed, target.command);
    options.onTarget?.(followed);
  }

  let end: MonitorEnd | null = null;
  let wake: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => (wake = resolve));
  const finish = (why: MonitorEnd) => {
    end ??= why;
    wake();
  };

  options.signal?.addEventListener('abort', () => finish({ kind: 'stopped' }), { once: true });
  if (options.signal?.aborted) finish({ kind: 'stopped' });
  sampler.listen((event) => {
    options.onEvent?.(event);
    if (event.kind === 'failed') finish({ kind: 'failed', message: event.message });
  });

  // The baseline, before anything starts.
  await sampler.sampleNow();
  let command: MonitoredCommand | null = null;
  if (options.target.kind === 'command' && end === null) {
    const argv = options.target.argv;
    command = MonitoredCommand.start(
      argv,
      options.target.cwd,
      () => {
        // Synchronously at its exit, before its group is killed: what it left running.
        if (target) target.leftBehind = sampler.tracker.liveDescendants();
      },
      !!options.target.stdoutToStderr,
    );
    target = { pid: command.pid, command: argv.join(' '), startedByMonitor: true, exit: null, stoppedByMonitor: false, leftBehind: [] };
    watcher = watch(command.pid, target.command);
    options.onTarget?.(command.pid);
    void command.exited.then((exit) => {
      if (target) target.exit = exit;
      finish({ kind: 'target-exited', pid: command!.pid, code: exit.code, signal: exit.signal });
    });
  }
  if (followed !== null) watcher = watch(followed, target!.command);
  sampler.start();
  options.onSampling?.();

  const timers: NodeJS.Timeout[] = [];
  if (options.durationS) timers.push(setTimeout(() => finish({ kind: 'duration', durationS: options.durationS! }), options.durationS * 1000));
  if (followed !== null) {
    const poll = setInterval(() => {
      if (!processRuns(followed)) finish({ kind: 'target-exited', pid: followed, code: null, signal: null });
    }, MIN_BATCH_MS);
    timers.push(poll);
    if (!processRuns(followed)) finish({ kind: 'target-exited', pid: followed, code: null, signal: null });
  }

  try {
    await ended;
    if (command?.running) {
      if (target) target.stoppedByMonitor = true;
      await command.stop();
      if (target) target.exit = await command.exited;
    }
    const why = end as MonitorEnd | null;
    const tailMs = options.tailMs ?? TAIL_AFTER_EXIT_MS;
    if (why?.kind === 'target-exited' && tailMs > 0) await tail(sampler, why.pid, tailMs, options.signal);
  } finally {
    for (const t of timers) clearTimeout(t);
    sampler.stop();
    watcher?.stop();
    if (command?.running) command.kill();
  }
  // The last listings' processes are being named (command lines read off the JS thread): the report waits a moment for them.
  await sampler.tracker.named();

  const problems = problemsOf(sampler, watcher);
  const include = !!options.includeSamples;
  const report = buildMonitorReport({
    startedAtUs,
    endedAtUs: Date.now() * 1000,
    end: end!,
    target,
    sampling: sampler.samplingStats(),
    devices: source.devices,
    reservedBytes: sampler.reservedBytes,
    deviceTrends: sampler.summary.devices(),
    processTrends: sampler.summary.processes(),
    processes: sampler.tracker.all(),
    relations: sampler.tracker.relations(),
    parents: sampler.tracker.parents(),
    series: {
      intervalMs: sampler.intervalMs,
      devices: source.devices,
      processes: sampler.tracker.all(),
      samples: include ? sampler.store.newest(MAX_REPORTED_SAMPLES) : [],
      dropped: sampler.store.dropped + (include ? Math.max(0, sampler.store.length - MAX_REPORTED_SAMPLES) : 0),
    },
    samplesIncluded: include,
    problems,
  });
  return { report, store: sampler.store, callInFlight: sampler.callInFlight };
}
