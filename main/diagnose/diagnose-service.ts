import { copyFile, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

import type { AbortLike } from '../../core/api/channels';
import type { EnvironmentEvidence, Evidence, RunEvidence, RunKind } from '../../core/diagnose/evidence';
import { isSanitizerRun } from '../../core/diagnose/evidence';
import { nextStep, OFFERED_PASSES } from '../../core/diagnose/next-step-rules';
import { readFailure } from '../../core/diagnose/read-failure';
import { environmentFindings, runFindings, STEP_TITLES, type DiagnoseEvent, type DiagnosisReport, type DiagnosisStep } from '../../core/diagnose/report';
import { judge } from '../../core/diagnose/verdict-rules';
import { locateProgram } from '../memory/monitored-command';
import { NvmlUnavailableError, openNvmlSource, type NvmlSource } from '../memory/nvml-source';
import { isPythonProgram, gatherProgramEnvironment } from './program-environment';
import { makePrivateFolder } from '../services/private-folder';
import { runProgramOnce } from './program-process';
import { monitorWhileRunning, type Watched } from './monitor-run';
import { within } from './time-bound';
import { OutputStreamer } from './output-streamer';
import { readOomPicture, startOomSnapshotReader } from './oom-history';
import { runSanitizerStep } from './sanitizer-step';
import SHIM from './python/sitecustomize.py';

export const DEFAULT_BUDGET_MS = 10 * 60_000;
/** How long the report waits, after the last step, for the first run's monitor to finish. */
const MONITOR_SETTLE_MS = 5_000;

/** NVML, opened while the environment is looked at, or why it could not be. */
export interface OpenedNvml {
  source: NvmlSource | null;
  problem: string | null;
}

export interface DiagnoseRequest {
  /** The program and its arguments, as words. */
  argv: string[];
  cwd: string;
  /** The user's changes to the host's environment for the program. */
  env?: Record<string, string>;
  /** Run the sanitizer passes after a clean exit instead of offering them. */
  thorough?: boolean;
  budgetMs?: number;
  signal?: AbortLike;
  onEvent?: (event: DiagnoseEvent) => void;
  /** Copy the allocator history's snapshot here (it lives in a private folder removed at the end). */
  keepSnapshot?: string;
}

export type { DiagnoseEvent };

/** The variables each re-run sets; the shim's paths are filled in per diagnosis. */
function envChangesFor(kind: RunKind, folder: string, programEnv: NodeJS.ProcessEnv): Record<string, string> {
  switch (kind) {
    case 'blocking':
      return { CUDA_LAUNCH_BLOCKING: '1' };
    case 'fault-handler':
      return { PYTHONFAULTHANDLER: '1' };
    case 'allocator-history':
      return {
        PYTHONPATH: [join(folder, 'shim'), programEnv['PYTHONPATH']].filter(Boolean).join(delimiter),
        GPU_WORKBENCH_SNAPSHOT: join(folder, 'oom-snapshot.pickle'),
        GPU_WORKBENCH_SHIM_NOTES: join(folder, 'shim-notes.jsonl'),
      };
    default:
      return {};
  }
}

class Diagnosis {
  readonly steps: DiagnosisStep[] = [];
  readonly started = performance.now();
  readonly deadline: number;
  readonly programEnv: NodeJS.ProcessEnv;
  readonly evidence: Evidence;

  nvml: NvmlSource | null = null;
  /** The first run's monitor, finishing (its tail, the names still being read) while the next step already runs. */
  private watching: Promise<void> = Promise.resolve();
  /** The environment step's Python probe, answering while the first run goes on. */
  private probing: Promise<void> = Promise.resolve();
  /** Ends the first run's monitor once another step starts: that step's processes are not the first run's. */
  private stopWatching: () => void = () => undefined;

  constructor(
    readonly request: DiagnoseRequest,
    readonly folder: string,
  ) {
    this.deadline = this.started + (request.budgetMs ?? DEFAULT_BUDGET_MS);
    this.programEnv = { ...process.env, ...request.env };
    this.evidence = {
      argv: request.argv,
      python: isPythonProgram(request.argv),
      thorough: !!request.thorough,
      environment: emptyEnvironment(),
      runs: [],
      notRun: [],
    };
  }

  remaining = () => Math.max(0, this.deadline - performance.now());
  stopped = () => !!this.request.signal?.aborted || this.remaining() <= 0;

  begin(step: Omit<DiagnosisStep, 'status' | 'durationMs' | 'findings'>): number {
    const index = this.steps.push({ ...step, status: 'running', durationMs: null, findings: [] }) - 1;
    this.request.onEvent?.({ kind: 'step-started', index, step: this.steps[index]! });
    return index;
  }

  end(index: number, patch: Partial<DiagnosisStep>): void {
    Object.assign(this.steps[index]!, patch);
    this.request.onEvent?.({ kind: 'step-finished', index, step: this.steps[index]! });
  }

  async environment(nvmlOpening: Promise<OpenedNvml>): Promise<void> {
    const index = this.begin({
      kind: 'environment',
      title: STEP_TITLES.environment,
      why: 'What the program will inherit, and what already holds the GPUs.',
      rule: null,
      argv: [],
      envChanges: {},
    });
    const t0 = performance.now();
    const gathered = await gatherProgramEnvironment({
      argv: this.request.argv,
      cwd: this.request.cwd,
      env: this.programEnv,
      signal: this.request.signal,
      nvml: nvmlOpening.then((opened) => {
        this.nvml = opened.source;
        return opened;
      }),
      deadlineMs: this.deadline,
    });
    this.evidence.environment = gathered.environment;
    this.end(index, { status: 'done', durationMs: performance.now() - t0, findings: environmentFindings(this.evidence.environment) });
    // The probe's answer, while the first run goes on: the step's findings are said again with it.
    this.probing =
      gathered.python?.then((environment) => {
        this.evidence.environment = environment;
        this.end(index, { findings: environmentFindings(environment) });
      }) ?? Promise.resolve();
  }

  async run(kind: RunKind, why: string, rule: string | null): Promise<void> {
    const envChanges = envChangesFor(kind, this.folder, this.programEnv);
    if (kind !== 'as-is') this.stopWatching();
    const index = this.begin({ kind, title: STEP_TITLES[kind], why, rule, argv: this.request.argv, envChanges });
    if (kind === 'allocator-history') await this.writeShim();
    const env = { ...this.programEnv, ...envChanges };
    const evidence = isSanitizerRun(kind) ? await runSanitizerStep(kind, this, env, index) : await this.runProgram(kind, index, env, envChanges);
    this.evidence.runs.push(evidence);
    const couldNot = evidence.sanitizer?.unavailable ? 'could-not-run' : evidence.exit.outOfBudget || evidence.exit.cancelled ? 'stopped' : 'done';
    const unwatched = kind === 'as-is' && !this.nvml ? ['Not monitored: NVML is not available here, so no process’s GPU memory was watched.'] : [];
    this.end(index, { status: couldNot, durationMs: evidence.durationMs, findings: [...runFindings(evidence), ...unwatched] });
  }

  /** The monitor's picture of a run, once it has finished: the run's findings are said again with it. */
  private attachWatch(index: number, evidence: RunEvidence, finishing: Promise<Watched>): void {
    this.watching = finishing.then((watched) => {
      evidence.processes = watched.processes;
      evidence.memory = watched.memory;
      evidence.watchProblems = watched.watchProblems;
      if (this.steps[index]!.status !== 'running') this.end(index, { findings: runFindings(evidence) });
    });
  }

  /**
   * Waits for what still finishes in the background — the first run's monitor (not past a hung driver), the Python
   * probe (stopped at its own time limit) — before the report is made.
   */
  settled = async () => {
    await within(this.watching, MONITOR_SETTLE_MS, () => {
      const first = this.evidence.runs.find((r) => r.kind === 'as-is');
      first?.watchProblems.push(
        `The monitor did not finish within ${MONITOR_SETTLE_MS / 1000} s of the run (NVML did not answer): what it saw is not in this report.`,
      );
    });
    await this.probing;
  };

  private async runProgram(kind: RunKind, index: number, env: NodeJS.ProcessEnv, envChanges: Record<string, string>): Promise<RunEvidence> {
    const monitor = kind === 'as-is' && this.nvml ? monitorWhileRunning(this.nvml, this.request.signal) : null;
    const streamer = new OutputStreamer((text, stream) => this.request.onEvent?.({ kind: 'output', index, stream, text }));
    const snapshotReader = kind === 'allocator-history' ? startOomSnapshotReader(this.folder, envChanges) : null;
    let evidence: RunEvidence;
    try {
      const result = await runProgramOnce({
        argv: this.request.argv,
        cwd: this.request.cwd,
        env,
        timeoutMs: this.remaining(),
        signal: this.request.signal,
        onOutput: (text, stream) => streamer.push(text, stream),
        onStart: (pid) => monitor?.follow(pid),
      });
      streamer.flush();
      const output = result.spawnError ? `${result.output}\n${result.spawnError}` : result.output;
      evidence = {
        kind,
        argv: this.request.argv,
        envChanges,
        exit: result.exit,
        durationMs: result.durationMs,
        output,
        outputDroppedBytes: result.droppedBytes,
        failure: readFailure(output, result.exit),
        sanitizer: null,
        oomPicture: snapshotReader
          ? await readOomPicture(this.folder, envChanges, snapshotReader, { signal: this.request.signal, timeoutMs: Math.max(1_000, this.remaining()) })
          : null,
        processes: null,
        memory: null,
        watchProblems: [],
      };
    } finally {
      // Read by now, or never to be: a reader left waiting would hold its place among the waiting readers for good.
      snapshotReader?.dispose();
    }
    if (monitor) {
      this.stopWatching = monitor.stop;
      this.attachWatch(index, evidence, monitor.finish());
    }
    return evidence;
  }

  /** The snapshot leaves the private folder for the path the user named; the report then points there. */
  async keepSnapshot(path: string): Promise<void> {
    for (const run of this.evidence.runs) {
      if (!run.oomPicture?.snapshotPath) continue;
      try {
        await copyFile(run.oomPicture.snapshotPath, path);
        run.oomPicture.snapshotPath = path;
      } catch (error) {
        // The diagnosis stands without it: said, not thrown.
        run.oomPicture.missing = `the snapshot was recorded but could not be kept at ${path}: ${error instanceof Error ? error.message : String(error)}.`;
      }
    }
  }

  private async writeShim(): Promise<void> {
    await mkdir(join(this.folder, 'shim'), { recursive: true, mode: 0o700 });
    await writeFile(join(this.folder, 'shim', 'sitecustomize.py'), SHIM, { mode: 0o600 });
  }

  /** Asks the rules for the next step until none is called for; a step past the budget is said, not run. */
  async followTheEvidence(): Promise<void> {
    for (let step = nextStep(this.evidence); step; step = nextStep(this.evidence)) {
      if (this.stopped()) {
        const reason = this.request.signal?.aborted ? 'cancelled before it started' : 'the time budget ran out before it could start';
        this.evidence.notRun.push({ kind: step.kind, why: step.why, reason });
        this.steps.push({
          kind: step.kind,
          title: STEP_TITLES[step.kind],
          why: step.why,
          rule: step.rule,
          argv: [],
          envChanges: {},
          status: 'not-run',
          durationMs: null,
          findings: [reason],
        });
        continue;
      }
      await this.run(step.kind, step.why, step.rule);
    }
  }

  report(): DiagnosisReport {
    const first = this.evidence.runs[0];
    const offered =
      !this.request.thorough && first?.failure.category === 'clean' ? OFFERED_PASSES.filter((k) => !this.evidence.runs.some((r) => r.kind === k)) : [];
    return {
      schema: 1,
      program: { argv: this.request.argv, cwd: this.request.cwd, envChanges: this.request.env ?? {}, thorough: !!this.request.thorough },
      startedAt: new Date(Date.now() - (performance.now() - this.started)).toISOString(),
      durationMs: performance.now() - this.started,
      budgetMs: this.request.budgetMs ?? DEFAULT_BUDGET_MS,
      verdict: judge(this.evidence, { cwd: this.request.cwd, envChanges: this.request.env ?? {} }),
      steps: this.steps,
      evidence: this.evidence,
      offered: [...offered],
    };
  }
}

const emptyEnvironment = (): EnvironmentEvidence => ({ checks: [], gpus: null, driver: null, python: null, processes: [], problems: [] });

/**
 * Diagnoses a program the user did not write: the environment, a monitored run as it is, the failure read from its
 * output, then each re-run the evidence calls for, within a time budget; the verdict from a table of rules.
 */
export async function diagnoseProgram(request: DiagnoseRequest): Promise<DiagnosisReport> {
  if (!request.argv.length) throw new Error('No program to diagnose: give it after `--`.');
  locateProgram(request.argv[0]!, request.cwd, { ...process.env, ...request.env }['PATH']);
  const cwd = await stat(request.cwd).catch(() => null);
  if (!cwd?.isDirectory()) throw new Error(`The folder to run in, ${request.cwd}, does not exist.`);
  const nvmlOpening: Promise<OpenedNvml> = openNvmlSource().then(
    (source) => ({ source, problem: null }),
    (error: unknown) => {
      if (!(error instanceof NvmlUnavailableError)) throw error;
      return { source: null, problem: `${error.problem.title}: the GPUs and their memory are not watched. ${error.problem.remedy}` };
    },
  );
  const folder = await makePrivateFolder('diagnose');
  try {
    const d = new Diagnosis(request, folder);
    await d.environment(nvmlOpening);
    if (!d.stopped()) await d.run('as-is', 'The program as it is, watched: its output, its exit, and the memory of every process on the GPU.', null);
    await d.followTheEvidence();
    await d.settled();
    if (request.keepSnapshot) await d.keepSnapshot(request.keepSnapshot);
    // What stays in the private folder is gone once this returns: the report does not point at it.
    for (const run of d.evidence.runs) if (run.oomPicture?.snapshotPath?.startsWith(folder)) run.oomPicture.snapshotPath = null;
    return d.report();
  } finally {
    await rm(folder, { recursive: true, force: true }).catch(() => undefined);
  }
}

export type { Diagnosis };
