import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { MonitorReport, ProcessMemorySummary } from '../../core/memory/monitor-report';
import { decodeNvmlBatch } from '../../core/memory/nvml-sample-layout';
import { loadAddon } from '../../main/native/addon';
import { openNvmlSource } from '../../main/memory/nvml-source';
import { sampleDuring } from '../../main/memory/sample-during';
import { timelineFromRun } from '../../core/memory/run-timeline';
import { forkLauncher } from '../../main/process/launcher';
import { createWorkbench } from '../../main/workbench';
import { parseJson, ROOT, runCli } from '../helpers/cli';

// Monitoring on a real GPU through NVML: device memory moves by what a plan allocates; a second process is
// its own track under its PID; a PyTorch program that leaks shows steady growth of at least what it kept; a
// process nothing monitored started is flagged foreign; --pid follows one to its end. Needs python3 with torch.
const MiB = 2 ** 20;
const GiB = 2 ** 30;
const work = mkdtempSync(join(tmpdir(), 'wb-gpu-monitor-'));
const fmt = (b: number) => `${(b / MiB).toFixed(1)} MiB`;

/** Spins on the GPU's clock for `ns`, holding the buffer it is given. */
const HOLD = `__global__ void hold(unsigned char* buf, unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  buf[0] = 1;
}`;
const holdPlan = (bytes: number, ns: number) => ({
  version: 1,
  kernels: [{ id: 'hold', entry: 'hold', source: HOLD }],
  buffers: [{ name: 'big', type: 'u8', count: bytes }],
  steps: [
    { op: 'alloc', buffer: 'big' },
    { op: 'launch', kernel: 'hold', grid: [1, 1, 1], block: [1, 1, 1], args: [{ buffer: 'big' }, { scalar: { type: 'u64', value: String(ns) } }] },
    { op: 'free', buffer: 'big' },
  ],
  // No guards or poison: the driver is asked for exactly the buffer's bytes.
  checks: { guardBytes: 0, poison: false, determinismRuns: 0 },
});

const monitorCli = (args: string[]) => runCli(['monitor', '--json', ...args], { timeoutMs: 180_000 });
const processOf = (report: MonitorReport, pid: number): ProcessMemorySummary | undefined => report.processes.find((p) => p.pid === pid);

/** python3 holding `mib` MiB for `seconds`, started by the test (not by any monitor); resolves once it holds it. */
function pythonHolder(mib: number, seconds: number): Promise<ChildProcess> {
  const child = spawn(
    'python3',
    [
      '-c',
      `import torch,time\nx=torch.empty(${mib}*2**20,dtype=torch.uint8,device='cuda')\ntorch.cuda.synchronize()\nprint('ready',flush=True)\ntime.sleep(${seconds})`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('python3 with torch did not start in 120 s')), 120_000);
    child.on('exit', (code) => reject(new Error(`python3 exited with ${code} before holding memory`)));
    child.stdout!.on('data', (d: Buffer) => {
      if (!String(d).includes('ready')) return;
      clearTimeout(timer);
      resolve(child);
    });
  });
}

test('device memory sampled while a plan holds 1 GiB moves by 1 GiB (±2 MiB), and the runner is its own track, unflagged', async () => {
  const workbench = createWorkbench(forkLauncher, { warmSpare: false });
  try {
    const warm = await workbench.runPlan(holdPlan(GiB, 1e6), { timeoutMs: 60_000 });
    assert.equal(warm.diagnosis.kind, 'ok', warm.diagnosis.headline);
    const runner = workbench.pool.status().runners.find((r) => r.role === 'active')!.pid;
    const { value: outcome, report, problem } = await sampleDuring(() => workbench.runPlan(holdPlan(GiB, 1.5e9), { timeoutMs: 60_000 }), { intervalMs: 10 });
    assert.equal(outcome.diagnosis.kind, 'ok', outcome.diagnosis.headline);
    assert.ok(report, `no samples: ${problem}`);
    const device = report.devices[0]!;
    const delta = device.peakUsedBytes - device.baselineUsedBytes;
    console.log(
      `# GPU 0: baseline ${fmt(device.baselineUsedBytes)}, peak ${fmt(device.peakUsedBytes)} (+${fmt(delta)}), end ${fmt(device.endUsedBytes)}; ${report.sampling.samples} samples, ${report.sampling.skipped} skipped, NVML ${report.sampling.meanNativeUs.toFixed(0)} µs a call`,
    );
    assert.ok(Math.abs(delta - GiB) <= 2 * MiB, `the device moved by ${fmt(delta)}, not 1 GiB ± 2 MiB`);
    assert.ok(Math.abs(device.endUsedBytes - device.baselineUsedBytes) <= 2 * MiB, 'the plan freed it');
    const track = processOf(report, runner);
    assert.ok(track, `no track for the runner (PID ${runner}): ${JSON.stringify(report.processes.map((p) => p.pid))}`);
    assert.equal(track.relation, 'workbench');
    assert.equal(track.flag, null);
    assert.ok(track.peakBytes !== null && track.firstBytes !== null);
    assert.ok(Math.abs(track.peakBytes - track.firstBytes - GiB) <= 2 * MiB, `the runner's track moved by ${fmt(track.peakBytes - track.firstBytes)}`);
  } finally {
    await workbench.dispose();
  }
});

test('monitor -- python3 (512 MiB): its PID is its own track with at least 512 MiB; the CSV and the trace hold it', async () => {
  const csv = join(work, 'samples.csv');
  const trace = join(work, 'trace.json');
  const r = await monitorCli([
    '--interval',
    '50',
    '--csv',
    csv,
    '--trace',
    trace,
    '--',
    'python3',
    '-c',
    "import torch, time; x = torch.empty(512 * 2**20, dtype=torch.uint8, device='cuda'); torch.cuda.synchronize(); time.sleep(3)",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const report = parseJson<MonitorReport>(r);
  assert.equal(report.end.kind, 'target-exited');
  assert.deepEqual(report.target!.exit, { code: 0, signal: null });
  const track = processOf(report, report.target!.pid);
  assert.ok(track, `no track for PID ${report.target!.pid}: ${JSON.stringify(report.processes.map((p) => [p.pid, p.command]))}`);
  console.log(`# python3 (PID ${track.pid}): peak ${fmt(track.peakBytes ?? NaN)}, ${track.samples} samples; ${track.growth.text}`);
  assert.ok(track.peakBytes! >= 512 * MiB, `peak ${fmt(track.peakBytes!)}`);
  assert.equal(track.relation, 'target');
  assert.equal(track.flag, null);
  assert.match(track.command!, /^python3 -c import torch/);
  const device = report.devices[0]!;
  assert.ok(device.peakUsedBytes - device.baselineUsedBytes >= 512 * MiB);
  const lines = readFileSync(csv, 'utf8').trimEnd().split('\n');
  assert.match(lines[0]!, /^time_us,time_utc,device,device_name,used_bytes,free_bytes,total_bytes,/);
  assert.ok(lines[0]!.includes(`pid ${track.pid} (`), 'the process has a column');
  assert.equal(lines.length - 1, report.sampling.kept * report.devices.length, 'a row per sample and GPU');
  const events = (JSON.parse(readFileSync(trace, 'utf8')) as { traceEvents: { ph: string; name: string }[] }).traceEvents;
  assert.ok(
    events.some((e) => e.ph === 'C' && e.name.includes(String(track.pid))),
    'the process has a counter track in the trace',
  );
});

test('monitor -- python3 leak.py: the growth is at least what it appended, steady, and said to look like a leak', async () => {
  const r = await monitorCli(['--interval', '50', '--', 'python3', join(ROOT, 'samples/programs/pytorch-leak/leak.py'), '--steps', '30', '--mib', '16']);
  assert.equal(r.code, 0, r.stderr);
  const appended = (JSON.parse(/\{"appended_bytes".*\}/.exec(r.stderr)![0]) as { appended_bytes: number }).appended_bytes;
  assert.equal(appended, 30 * 16 * MiB);
  const report = parseJson<MonitorReport>(r);
  const track = processOf(report, report.target!.pid)!;
  console.log(`# leak.py: ${track.growth.text} (appended ${fmt(appended)})`);
  assert.ok(track.growth.bytes >= appended, `grew by ${fmt(track.growth.bytes)}, appended ${fmt(appended)}`);
  assert.ok(track.growth.steady, track.growth.text);
  assert.match(track.growth.text, /a leak looks like this/);
});

test('a process nothing monitored started is flagged foreign; --pid follows it to its end, unflagged', async () => {
  const holder = await pythonHolder(256, 6);
  try {
    const whole = await monitorCli(['--interval', '50', '--duration', '1.5']);
    assert.equal(whole.code, 0, whole.stderr);
    const report = parseJson<MonitorReport>(whole);
    assert.equal(report.end.kind, 'duration');
    const track = processOf(report, holder.pid!)!;
    assert.ok(track, 'the holder has a track');
    assert.equal(track.flag?.kind, 'foreign');
    assert.match(track.flag!.fix, /gpu-reset/);

    const followed = await monitorCli(['--interval', '50', '--pid', String(holder.pid)]);
    assert.equal(followed.code, 0, followed.stderr);
    const until = parseJson<MonitorReport>(followed);
    assert.equal(until.end.kind, 'target-exited');
    const mine = processOf(until, holder.pid!)!;
    assert.equal(mine.relation, 'target');
    assert.equal(mine.flag, null);
    assert.ok(mine.peakBytes! >= 256 * MiB);
  } finally {
    holder.kill('SIGKILL');
  }
});

test('a run asked to sample carries its series: the device moves by what the plan holds, and its timeline has the runner as a track', async () => {
  const workbench = createWorkbench(forkLauncher, { warmSpare: false });
  try {
    await workbench.runPlan(holdPlan(GiB, 1e6), { timeoutMs: 60_000 });
    const outcome = await workbench.runPlan(holdPlan(GiB, 1e9), { timeoutMs: 60_000, sampleIntervalMs: 10 });
    assert.equal(outcome.diagnosis.kind, 'ok', outcome.diagnosis.headline);
    assert.equal(outcome.samplingProblem, null);
    const series = outcome.samples!;
    assert.ok(series.samples.length >= 50, `${series.samples.length} samples`);
    const used = series.samples.map((s) => s.devices[0]!.usedBytes);
    const moved = Math.max(...used) - used[0]!;
    console.log(`# ${series.samples.length} samples; device 0 moved by ${fmt(moved)}, back to ${fmt(used[used.length - 1]! - used[0]!)} over its baseline`);
    assert.ok(Math.abs(moved - GiB) <= 2 * MiB, `moved by ${fmt(moved)}`);
    const timeline = timelineFromRun(outcome.result!, series);
    const runnerTrack = timeline.counters.find((c) => c.group === 'process' && c.pid === outcome.result!.runnerPid);
    assert.ok(runnerTrack, `no track for the runner: ${timeline.counters.map((c) => c.label).join(', ')}`);
    assert.ok(timeline.counters.some((c) => c.group === 'device'));
  } finally {
    await workbench.dispose();
  }
});

test('the sampling thread keeps its period (100 Hz: 100 rows a second, time-ordered, a listing each second) and ends at once when stopped, even mid-interval', async () => {
  await openNvmlSource(); // finds and loads NVML for the addon
  const addon = loadAddon().addon!;
  const threads = () => readdirSync('/proc/self/task').length;
  const before = threads();
  const id = addon.nvmlSamplerStart(10, 100);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const taken = addon.nvmlSamplerTake(id);
  const deviceCount = taken.reserved.length;
  const batch = decodeNvmlBatch(taken, deviceCount);
  assert.ok(batch.count >= 190 && batch.count <= 202, `${batch.count} samples in 2 s at 100 Hz`);
  assert.ok(taken.skipped <= 2, `${taken.skipped} ticks skipped`);
  const width = 1 + 3 * deviceCount;
  const times = Array.from({ length: batch.count }, (_, i) => batch.rows[i * width]!);
  assert.ok(
    times.every((t, i) => i === 0 || t > times[i - 1]!),
    'rows in time order',
  );
  const spanMs = (times.at(-1)! - times[0]!) / 1000;
  assert.ok(Math.abs(spanMs - 10 * (batch.count - 1)) < 50, `${batch.count} samples span ${spanMs.toFixed(1)} ms`);
  assert.ok(batch.listings.length >= 2, `${batch.listings.length} listings in 2 s (one a second at least)`);
  assert.equal(threads(), before + 1, 'one thread of its own');
  assert.equal(addon.nvmlSamplerStop(id), true);
  // A sampler at a 60 s interval, stopped right after its first sample: its thread must not wait out the minute.
  const slow = addon.nvmlSamplerStart(60_000, 0);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(addon.nvmlSamplerStop(slow), true);
  const started = performance.now();
  while (threads() > before && performance.now() - started < 2000) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(threads(), before, `both sampling threads ended (${(performance.now() - started).toFixed(0)} ms after the stop)`);
  assert.ok(performance.now() - started < 500, 'within half a second of the stop');
});
