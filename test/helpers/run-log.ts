/**
 * Run results with an event log, for the timeline's unit tests. The results are real (recorded on an H100, in
 * test/fixtures/runs/), but were recorded before the runner kept its event log: the log is written here by hand,
 * in the shape of core/runner/event-log.ts, from each fixture's own steps and timings (each event starts where the
 * step before it ended, and lasts the step's wall time). Addresses are of the form the runner writes. NVML sample
 * series are hand-made too, with the H100's real total memory. Replace with GPU-recorded logs when there are some.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { timelineFromRun } from '../../core/memory/run-timeline';
import type { SampleSeries } from '../../core/memory/samples';
import type { Timeline } from '../../core/memory/timeline';
import type { RunLogEvent } from '../../core/runner/event-log';
import type { RunOutcome } from '../../core/runner/run-outcome';
import type { RunResult } from '../../core/runner/run-result';
import { ROOT } from './cli';

export const H100_TOTAL = 85_017_493_504;
export const MiB = 1024 ** 2;
export const GUARD = 256;
/** When the hand-made runs began: 2026-11-23 12:00:00 UTC, in epoch ms. */
export const STARTED_AT_MS = 1_795_435_200_000;

/** A result as an older workbench saved it (test/fixtures/legacy/). */
export function legacyRun(file: string): RunResult {
  return (JSON.parse(readFileSync(join(ROOT, 'test/fixtures/legacy', file), 'utf8')) as RunOutcome).result!;
}

export function recordedRun(name: string): RunResult {
  const outcome = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs', `${name}.json`), 'utf8')) as RunOutcome;
  return outcome.result!;
}

type Step =
  { op: 'alloc' | 'free'; buffer: string; address: string; bytes: number } | { op: 'upload' | 'download'; buffer: string; bytes: number } | { op: 'launch' };

/**
 * An event log for `result`'s steps, step i being `steps[i]`: a module load first, the steps at the times their
 * wall times give, the launch timed on the GPU at its recorded median, and teardown frees for what is left.
 */
export function withEventLog(result: RunResult, steps: Step[], extra: { failAtStep?: number; error?: RunLogEvent } = {}): RunResult {
  const events: RunLogEvent[] = [];
  let t = 0.5;
  const launch = result.launches[0];
  events.push({ kind: 'module-load', t: 0, dur: 0.5, step: null, phase: 'load', kernel: launch?.kernel ?? 'k', imageBytes: 4096 });
  const live = new Map<string, { address: string; bytes: number }>();
  steps.forEach((s, i) => {
    const wall = result.steps[i]?.wallMs ?? 0.1;
    if (extra.failAtStep === i && extra.error) {
      events.push({ ...extra.error, t, step: i } as RunLogEvent);
      t += wall;
      return;
    }
    const base = { t, dur: wall, step: i, phase: 'run' as const };
    if (s.op === 'alloc') {
      events.push({ ...base, kind: 'alloc', buffer: s.buffer, address: s.address, bytes: s.bytes, allocatedBytes: s.bytes + 2 * GUARD });
      events.push({ ...base, t: t + wall / 2, dur: 0.01, kind: 'memset', buffer: s.buffer, address: s.address, bytes: s.bytes, value: 0xff, why: 'poison' });
      live.set(s.buffer, s);
    } else if (s.op === 'free') {
      events.push({ ...base, kind: 'free', buffer: s.buffer, address: s.address, bytes: s.bytes, allocatedBytes: s.bytes + 2 * GUARD });
      live.delete(s.buffer);
    } else if (s.op === 'upload' || s.op === 'download') {
      events.push({ ...base, kind: 'copy', direction: s.op === 'upload' ? 'HtoD' : 'DtoH', buffer: s.buffer, bytes: s.bytes, why: 'data' });
    } else {
      const gpuMs = launch?.medianMs ?? 0.01;
      events.push({
        ...base,
        kind: 'launch',
        kernel: launch?.kernel ?? 'k',
        entry: launch?.entry ?? 'k',
        grid: launch?.grid ?? [1, 1, 1],
        block: launch?.block ?? [1, 1, 1],
        sharedBytes: 0,
        gpu: [{ startMs: t + 0.05, endMs: t + 0.05 + gpuMs }],
      });
      events.push({ ...base, t: t + wall, dur: 0.02, kind: 'sync' });
    }
    t += wall;
  });
  for (const [buffer, s] of live) {
    events.push({ kind: 'free', t, dur: 0.05, step: null, phase: 'teardown', buffer, address: s.address, bytes: s.bytes, allocatedBytes: s.bytes + 2 * GUARD });
    t += 0.05;
  }
  return { ...result, startedAtMs: STARTED_AT_MS, events };
}

/** NVML samples every 10 ms from 5 ms before the run began: the device, the runner, and a foreign process. */
export function samplesAround(opts: { runnerPid: number; runnerBytes: (ms: number) => number; foreignBytes: number; untilMs: number }): SampleSeries {
  const startUs = STARTED_AT_MS * 1000 - 5000;
  const samples = [];
  for (let ms = -5; ms <= opts.untilMs; ms += 10) {
    const runner = opts.runnerBytes(ms);
    const used = 500 * MiB + runner + opts.foreignBytes;
    samples.push({
      timeUs: STARTED_AT_MS * 1000 + ms * 1000,
      devices: [{ index: 0, usedBytes: used, freeBytes: H100_TOTAL - used, totalBytes: H100_TOTAL }],
      processes: [...(runner > 0 ? [{ device: 0, pid: opts.runnerPid, usedBytes: runner }] : []), { device: 0, pid: 4242, usedBytes: opts.foreignBytes }],
    });
  }
  return {
    intervalMs: 10,
    devices: [{ index: 0, name: 'NVIDIA H100 80GB HBM3', uuid: 'GPU-211e0120-a03f-d321-37b8-500c399d5f3d', totalBytes: H100_TOTAL }],
    processes: [
      { pid: opts.runnerPid, command: 'node dist/main/runner.js', flag: null, firstSeenUs: startUs, lastSeenUs: samples.at(-1)!.timeUs },
      {
        pid: 4242,
        command: 'python train.py --batch 512',
        flag: { kind: 'foreign', text: 'Nothing you run here started it.', fix: 'Ask whoever runs it, or stop it if it is yours.' },
        firstSeenUs: startUs,
        lastSeenUs: samples.at(-1)!.timeUs,
      },
    ],
    samples,
    dropped: 0,
  };
}

/**
 * The recorded never-frees run as the Memory tab draws it: its three 4 MiB buffers allocated, two uploaded, the launch
 * and the read-back in its event log, with the device's memory sampled around it (the runner and a foreign process).
 */
export function neverFreesTimeline(): Timeline {
  const run = recordedRun('never-frees');
  const logged = withEventLog(run, [
    { op: 'alloc', buffer: 'a', address: '0x7f3a01e00100', bytes: 4 * MiB },
    { op: 'alloc', buffer: 'b', address: '0x7f3a02e00100', bytes: 4 * MiB },
    { op: 'alloc', buffer: 'c', address: '0x7f3a03e00100', bytes: 4 * MiB },
    { op: 'upload', buffer: 'a', bytes: 4 * MiB },
    { op: 'upload', buffer: 'b', bytes: 4 * MiB },
    { op: 'launch' },
    { op: 'download', buffer: 'c', bytes: 4 * MiB },
  ]);
  return timelineFromRun(logged, samplesAround({ runnerPid: run.runnerPid, runnerBytes: () => 12 * MiB, foreignBytes: MiB, untilMs: 50 }));
}
