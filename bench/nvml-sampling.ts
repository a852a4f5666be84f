import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';

import { loadAddon } from '../main/native/addon';
import type { MemorySample } from '../core/memory/samples';
import { MemorySampler, THREAD_PROCESS_NET_MS } from '../main/memory/memory-sampler';
import { NvmlUnavailableError, openNvmlSource, type SampleMode } from '../main/memory/nvml-source';
import { projectRoot } from '../main/paths';

/**
 * `npm run bench:nvml` (needs the NVIDIA driver): what monitoring costs the host. Target: sampling at 100 Hz,
 * processes included, costs under 1% of one core.
 *
 * Measured with process.cpuUsage() (every thread of this process: the JS thread and the libuv thread an NVML
 * call runs on), as a share of one core over the wall time:
 * - an idle host (a timer a second, nothing else): the floor;
 * - the raw reference: the bare native call in a tight loop, µs per call, on the JS thread (nvmlSampleSync) and
 *   through the worker (nvmlSample, awaited one after another), with processes and without;
 * - the MemorySampler at 100 Hz for SECONDS each: thread (the default), worker and inline mode with processes at
 *   every sample; thread with processes every 100 ms, and device memory only — with a batch listener attached,
 *   as the CLI and the UI have.
 * - the floor: bench/native/nvml-floor.cc, a bare C++ program doing what the sampling thread does at its
 *   default (the memory query every 10 ms, processes every second) and nothing else, built with the C++
 *   compiler that builds the addon. It and the default sampler take turns, ROUNDS times, and the medians
 *   are compared: what is left above the floor is the workbench's own cost. On a VM where every kernel
 *   entry is dear, the floor alone can be near the target.
 * Each sampler run is measured after NVML_BENCH_WARMUP_MS (2000) of sampling, for NVML_BENCH_SECONDS (10), with
 * the CPU and wake-ups of each thread and V8's collections in the window; NVML_BENCH_ROUNDS (3) rounds;
 * NVML_BENCH_DEFAULT_ONLY=1 runs only the rounds; NVML_BENCH_MARKERS=1 marks each window on stdout (to place
 * what `node --trace-opt` prints).
 * A process holding 256 MiB (python3 with torch, when there is one) is started first, so listing processes
 * lists one. Without NVML it says so and exits 2.
 */
const SECONDS = Number(process.env['NVML_BENCH_SECONDS'] ?? 10);
const RAW_CALLS = Number(process.env['NVML_BENCH_CALLS'] ?? 2000);
const ROUNDS = Number(process.env['NVML_BENCH_ROUNDS'] ?? 3);
/**
 * Sampling runs this long before its cost is measured, and the floor likewise: the target is what sampling
 * costs while it runs, and its start (the JIT compiling the drain, NVML's first calls, reading each
 * process's ancestry once) is a one-off, reported apart as CPU ms.
 */
const WARMUP_MS = Number(process.env['NVML_BENCH_WARMUP_MS'] ?? 2000);
/** NVML_BENCH_MARKERS=1: a line on stdout where each measured window starts and ends, to place what `node --trace-opt` prints. */
const MARKERS = process.env['NVML_BENCH_MARKERS'] === '1';
/** NVML_BENCH_DEFAULT_ONLY=1: only the rounds of idle, floor and default sampler (the verdict), not the other modes. */
const DEFAULT_ONLY = process.env['NVML_BENCH_DEFAULT_ONLY'] === '1';

interface GcCount {
  minor: number;
  major: number;
  ms: number;
}

/** Counts V8's collections until stop() (minor: scavenges; major: mark-compact and the rest). */
function countGc(): { stop(): GcCount } {
  const count: GcCount = { minor: 0, major: 0, ms: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) count.minor++;
      else count.major++;
      count.ms += entry.duration;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    stop: () => {
      observer.disconnect();
      return count;
    },
  };
}
const TARGET_PERCENT = 1;

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const percentOfCore = (cpu: number, wallMs: number) => (cpu / 1000 / wallMs) * 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ThreadStat {
  cpuNs: number;
  /** Times the thread was put on a CPU (schedstat's third field): its wake-ups, near enough. */
  runs: number;
  name: string;
}

/** Each thread's CPU time and runs so far (/proc/self/task/TID/schedstat, comm): where the cost goes. */
function threadStats(): Map<number, ThreadStat> {
  const out = new Map<number, ThreadStat>();
  let tids: string[] = [];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const [cpuNs, , runs] = readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').trim().split(' ').map(Number);
      out.set(Number(tid), { cpuNs: cpuNs!, runs: runs!, name: readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() });
    } catch {
      // a thread that ended meanwhile
    }
  }
  return out;
}

interface ThreadShare {
  percent: number;
  /** Runs per second. */
  wakes: number;
}
interface ThreadSplit {
  js: ThreadShare;
  sampler: ThreadShare;
  /** The other threads, summed by name (V8's workers, libuv's pool, …). */
  others: Map<string, ThreadShare>;
}

/** Per-thread CPU (% of a core) and wake-ups over the window: the JS thread, threads born since `existing` (the sampling thread), the rest by name. */
function threadSplit(existing: Set<number>, before: Map<number, ThreadStat>, after: Map<number, ThreadStat>, wallMs: number): ThreadSplit {
  const share = (ns: number, runs: number): ThreadShare => ({ percent: (ns / 1e6 / wallMs) * 100, wakes: runs / (wallMs / 1000) });
  const add = (a: ThreadShare, b: ThreadShare): ThreadShare => ({ percent: a.percent + b.percent, wakes: a.wakes + b.wakes });
  const zero = { percent: 0, wakes: 0 };
  const split: ThreadSplit = { js: zero, sampler: zero, others: new Map() };
  for (const [tid, now] of after) {
    const was = before.get(tid);
    const delta = share(now.cpuNs - (was?.cpuNs ?? 0), now.runs - (was?.runs ?? 0));
    if (tid === process.pid) split.js = add(split.js, delta);
    else if (!existing.has(tid)) split.sampler = add(split.sampler, delta);
    else split.others.set(now.name, add(split.others.get(now.name) ?? zero, delta));
  }
  return split;
}

const othersPercent = (split: ThreadSplit) => [...split.others.values()].reduce((sum, o) => sum + o.percent, 0);

async function measureIdle(): Promise<number> {
  const keep = setInterval(() => undefined, 1000);
  const c0 = cpuUs();
  const t0 = performance.now();
  await sleep(SECONDS * 1000);
  clearInterval(keep);
  return percentOfCore(cpuUs() - c0, performance.now() - t0);
}

async function measureRaw(label: string, call: () => unknown): Promise<{ label: string; wallUs: number; cpuUs: number }> {
  for (let i = 0; i < 50; i++) await call();
  const c0 = cpuUs();
  const t0 = performance.now();
  for (let i = 0; i < RAW_CALLS; i++) await call();
  return { label, wallUs: ((performance.now() - t0) * 1000) / RAW_CALLS, cpuUs: (cpuUs() - c0) / RAW_CALLS };
}

async function measureSampler(
  label: string,
  mode: SampleMode,
  options: { processIntervalMs?: number; includeProcesses: boolean; batchMs?: number },
): Promise<{
  label: string;
  percent: number;
  startupCpuMs: number;
  gc: GcCount;
  samples: number;
  skipped: number;
  nativeUs: number;
  listed: number;
  split: ThreadSplit;
}> {
  const source = await openNvmlSource(mode);
  const sampler = new MemorySampler(source, { intervalMs: 10, ...options });
  // What the CLI's listener reads of each batch (its progress line); the live UI also has every sample made into an object to send.
  let newest: MemorySample | null = null;
  sampler.listen((event) => {
    if (event.kind === 'batch') newest = event.batch.latest ?? newest;
  });
  const existing = new Set(threadStats().keys());
  const cStart = cpuUs();
  sampler.start();
  await sleep(WARMUP_MS);
  const threads0 = threadStats();
  const c0 = cpuUs();
  const t0 = performance.now();
  const samples0 = sampler.samplingStats().samples;
  const gc = countGc();
  if (MARKERS) console.log(`### measuring: ${label}`);
  await sleep(SECONDS * 1000);
  const threads1 = threadStats(); // before stop: the sampling thread is still there to be read
  const c1 = cpuUs();
  if (MARKERS) console.log(`### measured: ${label}`);
  const gcs = gc.stop();
  const wall = performance.now() - t0;
  const listed = sampler.listedNow.size;
  sampler.stop();
  const stats = sampler.samplingStats();
  if (!newest) throw new Error(`${label}: the listener was handed no sample`);
  return {
    label,
    percent: percentOfCore(c1 - c0, wall),
    startupCpuMs: (c0 - cStart) / 1000,
    gc: gcs,
    samples: stats.samples - samples0,
    skipped: stats.skipped,
    nativeUs: stats.meanNativeUs,
    listed,
    split: threadSplit(existing, threads0, threads1, wall),
  };
}

/** A process holding GPU memory, so there is one to list; null where python3 with torch is not here. */
const HOLD = "import torch,time\nx=torch.empty(256*2**20,dtype=torch.uint8,device='cuda')\nprint('ready',flush=True)\ntime.sleep(3600)";
/** Device memory that moves all the time: 64 MiB taken and given back to the driver every few milliseconds. */
const CHURN =
  "import torch,time\nx=torch.empty(1,device='cuda')\nprint('ready',flush=True)\nwhile True:\n  y=torch.empty(64*2**20,dtype=torch.uint8,device='cuda')\n  del y\n  torch.cuda.empty_cache()\n  time.sleep(0.002)";

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

interface FloorRun {
  percent: number;
  samples: number;
  wakesPerSecond: number;
  tightCallCpuUs: number;
}

/** Builds the bare C++ reference; null (with why) where there is no compiler. */
function buildFloor(): { binary: string } | { problem: string } {
  const root = projectRoot();
  const binary = join(mkdtempSync(join(tmpdir(), 'nvml-floor-')), 'nvml-floor');
  const compiler = process.env['CXX'] ?? 'c++';
  try {
    execFileSync(compiler, ['-O2', '-std=c++17', '-I', join(root, 'native/src'), join(root, 'bench/native/nvml-floor.cc'), '-o', binary, '-ldl', '-pthread'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 120_000,
    });
    return { binary };
  } catch (error) {
    return { problem: `${compiler} could not build bench/native/nvml-floor.cc (${error instanceof Error ? error.message.split('\n')[0] : String(error)})` };
  }
}

function runFloor(binary: string): FloorRun {
  const processEvery = THREAD_PROCESS_NET_MS / 10;
  const out = execFileSync(binary, [String(SECONDS), '10', String(processEvery), String(WARMUP_MS / 1000)], {
    encoding: 'utf8',
    timeout: (SECONDS + WARMUP_MS / 1000 + 60) * 1000,
  });
  return JSON.parse(out) as FloorRun;
}

async function startHolder(program = HOLD): Promise<ChildProcess | null> {
  const child = spawn('python3', ['-c', program], { stdio: ['ignore', 'pipe', 'ignore'] });
  process.on('exit', () => child.kill('SIGKILL'));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(null);
    }, 60_000);
    child.on('error', () => resolve(null));
    child.on('exit', () => resolve(null));
    child.stdout!.on('data', (d: Buffer) => {
      if (!String(d).includes('ready')) return;
      clearTimeout(timer);
      resolve(child);
    });
  });
}

async function main(): Promise<number> {
  try {
    await openNvmlSource();
  } catch (error) {
    if (!(error instanceof NvmlUnavailableError)) throw error;
    console.error(`✗ No NVML here, so nothing to measure: ${error.problem.title}. ${error.problem.detail}\n  ${error.problem.remedy}`);
    return 2;
  }
  const addon = loadAddon().addon!;
  const holder = await startHolder();
  console.log(
    holder
      ? `A python3 process (PID ${holder.pid}) holds 256 MiB, so listing processes lists it.`
      : 'No python3 with torch here: processes are listed as they are (perhaps none).',
  );
  console.log(`Each sampler run: 100 Hz for ${SECONDS} s; raw calls: ${RAW_CALLS} each.\n`);

  const raw = [
    await measureRaw('nvmlSampleSync, with processes (JS thread)', () => addon.nvmlSampleSync(true)),
    await measureRaw('nvmlSampleSync, device only (JS thread)', () => addon.nvmlSampleSync(false)),
    await measureRaw('nvmlSample, with processes (worker, awaited)', () => addon.nvmlSample(true)),
    await measureRaw('nvmlSample, device only (worker, awaited)', () => addon.nvmlSample(false)),
  ];
  const floorBuild = buildFloor();
  const idles: number[] = [];
  const floors: FloorRun[] = [];
  const defaults: Awaited<ReturnType<typeof measureSampler>>[] = [];
  // Idle, floor and the default take turns, so a machine's drift falls on all three alike.
  for (let round = 1; round <= ROUNDS; round++) {
    idles.push(await measureIdle());
    if ('binary' in floorBuild) floors.push(runFloor(floorBuild.binary));
    defaults.push(await measureSampler(`thread (default), round ${round}`, 'thread', { includeProcesses: true }));
  }
  const idle = median(idles);
  const runs = [...defaults];
  let churner: ChildProcess | null = null;
  if (!DEFAULT_ONLY) {
    runs.push(
      await measureSampler('thread, processes every sample', 'thread', { includeProcesses: true, processIntervalMs: 10 }),
      await measureSampler('worker, processes every sample', 'worker', { includeProcesses: true }),
      await measureSampler('inline, processes every sample', 'inline', { includeProcesses: true }),
      await measureSampler('thread, processes every 100 ms', 'thread', { includeProcesses: true, processIntervalMs: 100 }),
      await measureSampler('thread, device memory only', 'thread', { includeProcesses: false }),
      await measureSampler('thread (default), batches of 250 ms', 'thread', { includeProcesses: true, batchMs: 250 }),
      await measureSampler('thread (default), batches of 500 ms', 'thread', { includeProcesses: true, batchMs: 500 }),
    );
  }
  holder?.kill('SIGKILL');
  if (!DEFAULT_ONLY) {
    // The default's worst case: memory that moves at every sample makes it list processes at every sample.
    churner = await startHolder(CHURN);
    if (churner) runs.push(await measureSampler('thread (default), memory moving', 'thread', { includeProcesses: true }));
    churner?.kill('SIGKILL');
  }

  console.log('Raw reference: the native call alone, one after another');
  console.log(`  ${'call'.padEnd(48)} ${'wall µs/call'.padStart(13)} ${'CPU µs/call'.padStart(12)}`);
  for (const r of raw) console.log(`  ${r.label.padEnd(48)} ${r.wallUs.toFixed(1).padStart(13)} ${r.cpuUs.toFixed(1).padStart(12)}`);
  console.log(`\nIdle host: ${idles.map((i) => `${i.toFixed(3)}%`).join(', ')} of one core (median ${idle.toFixed(3)}%)\n`);
  console.log(
    `MemorySampler at 100 Hz, measured for ${SECONDS} s after ${WARMUP_MS / 1000} s of sampling (% of one core, all threads; "above idle" subtracts the median idle host;` +
      ` per thread: % of a core and wake-ups a second; "start-up": CPU ms in the first ${WARMUP_MS / 1000} s, a one-off)`,
  );
  const share = (t: ThreadShare) => `${t.percent.toFixed(3)}/${t.wakes.toFixed(0)}`;
  console.log(
    `  ${'mode'.padEnd(36)} ${'% core'.padStart(7)} ${'above idle'.padStart(10)} ${'samples'.padStart(7)} ${'skipped'.padStart(7)} ${'NVML µs'.padStart(7)} ${'listed'.padStart(6)} ${'JS thread'.padStart(10)} ${'sampling'.padStart(10)} ${'others'.padStart(7)} ${'start-up'.padStart(8)} ${'GC minor/major ms'.padStart(17)}`,
  );
  for (const r of runs)
    console.log(
      `  ${r.label.padEnd(36)} ${r.percent.toFixed(3).padStart(7)} ${(r.percent - idle).toFixed(3).padStart(10)} ${String(r.samples).padStart(7)} ${String(r.skipped).padStart(7)} ${r.nativeUs.toFixed(1).padStart(7)} ${String(r.listed).padStart(6)} ${share(r.split.js).padStart(10)} ${share(r.split.sampler).padStart(10)} ${othersPercent(r.split).toFixed(3).padStart(7)} ${r.startupCpuMs.toFixed(1).padStart(8)} ${`${r.gc.minor}/${r.gc.major} ${r.gc.ms.toFixed(1)}`.padStart(17)}`,
    );
  console.log('  the other threads of the default runs, by name (% of a core/wake-ups a second):');
  for (const r of defaults)
    console.log(
      `    ${r.label}: ${
        [...r.split.others]
          .filter(([, o]) => o.percent > 0 || o.wakes > 0)
          .map(([name, o]) => `${name} ${share(o)}`)
          .join(', ') || 'none ran'
      }`,
    );
  const ours = median(defaults.map((r, i) => r.percent - idles[i]!));
  console.log(`\nThe floor: a bare C++ loop doing only what the sampling thread does (bench/native/nvml-floor.cc), % of one core`);
  if ('problem' in floorBuild) console.log(`  not measured: ${floorBuild.problem}`);
  for (const [i, f] of floors.entries())
    console.log(
      `  round ${i + 1}: ${f.percent.toFixed(3)}% (${f.samples} samples, ${f.wakesPerSecond.toFixed(0)} wake-ups a second; the memory query in a tight loop: ${f.tightCallCpuUs.toFixed(1)} µs of CPU a call)`,
    );
  const floor = floors.length ? median(floors.map((f) => f.percent)) : null;
  const pass = ours < TARGET_PERCENT;
  console.log(
    `\nTarget: 100 Hz with processes (the default: the sampling thread, processes listed when device memory moves and every ${THREAD_PROCESS_NET_MS / 1000} s) under ${TARGET_PERCENT}% of a core above idle.` +
      `\n  The workbench, median of ${defaults.length} (each above its round's idle): ${ours.toFixed(3)}% → ${pass ? 'met' : 'NOT met'}` +
      (floor === null
        ? ''
        : `\n  The bare C++ floor, median of ${floors.length}: ${floor.toFixed(3)}%; the workbench's own cost above it: ${(ours - floor).toFixed(3)}%`) +
      (churner ? `\n  While memory moves at every sample (processes listed each time): ${(runs[runs.length - 1]!.percent - idle).toFixed(3)}%` : ''),
  );
  return pass ? 0 : 1;
}

void main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`✗ ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
