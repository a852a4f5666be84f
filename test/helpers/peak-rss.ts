import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT, streamsHeldAfterExit, type CliResult } from './cli';

/**
 * A process's peak memory read from outside, as the kernel keeps it (VmHWM in /proc/PID/status), with its
 * descendants' (the reader processes it starts) sampled beside it.
 */

export const MiB = 2 ** 20;

/** The peak resident memory of a process so far, in bytes; null once it is gone. */
export function peakRss(pid: number): number | null {
  try {
    const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? null : Number(kib) * 1024;
  } catch {
    return null;
  }
}

/** Starts the kernel's peak over from the process's present size; false where the kernel does not allow it. */
export function clearPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The processes started by `pid` and by them, from each thread's children list. */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const t of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${p}/task/${t}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const c of children.split(' ').filter(Boolean).map(Number)) {
        out.push(c);
        visit(c);
      }
    }
  };
  visit(pid);
  return out;
}

/** Samples a process's peak and its descendants' every `everyMs` until stopped: { host, readers } in bytes. */
export function samplePeaks(pid: number, everyMs = 20): () => { host: number; readers: number } {
  const peaks = { host: 0, readers: 0 };
  const sample = () => {
    peaks.host = Math.max(peaks.host, peakRss(pid) ?? 0);
    for (const c of descendants(pid)) peaks.readers = Math.max(peaks.readers, peakRss(c) ?? 0);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return () => {
    clearInterval(timer);
    sample();
    return peaks;
  };
}

export interface MeasuredCli extends CliResult {
  /** The CLI's own peak, in bytes: what it reported as it exited, or the highest sampled. */
  peak: number;
  /** The highest peak sampled among the processes it started (its readers). */
  readersPeak: number;
}

/**
 * Runs the real CLI as runCli does, its peak memory sampled from /proc and also read by the CLI itself as it exits (a
 * preload in `dir` writes its VmHWM), so a rise in its last moments is not missed. Not getrusage's maxRSS: that keeps
 * the peak of the process it was forked from (this test's), carried over the exec.
 */
export function runCliMeasured(args: string[], dir: string, timeoutMs = 60_000): Promise<MeasuredCli> {
  const preload = join(dir, 'peak-preload.cjs');
  const peakFile = join(dir, `peak-${process.hrtime.bigint()}.txt`);
  writeFileSync(
    preload,
    `process.on('exit', () => { try { const fs = require('fs'); fs.writeFileSync(process.env.WB_TEST_PEAK_FILE, /VmHWM:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]); } catch {} });\n`,
  );
  const started = performance.now();
  const child = spawn(process.execPath, ['--require', preload, join(ROOT, 'bin/gpu-workbench.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, WB_TEST_PEAK_FILE: peakFile },
  });
  const stop = samplePeaks(child.pid!);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gpu-workbench ${args.join(' ')} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    // The answer is complete at 'close' (both streams ended), not at 'exit'; time and peaks are taken at the exit.
    let ms = 0;
    let sampled = { host: 0, readers: 0 };
    child.on('exit', (code) => {
      ms = performance.now() - started;
      sampled = stop();
      streamsHeldAfterExit(child, code, reject);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      let reported = 0;
      try {
        reported = Number(readFileSync(peakFile, 'utf8')) * 1024;
      } catch {
        // It ended without running its exit handlers (killed): the samples are all there is.
      }
      resolve({ code, stdout, stderr, ms, peak: Math.max(sampled.host, reported), readersPeak: sampled.readers });
    });
  });
}
