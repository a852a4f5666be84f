import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import type { DescendantRecord } from '../../core/memory/descendant-log';
import { buildMonitorReport, type MonitorReport } from '../../core/memory/monitor-report';
import { commandLineOf, type ProcStat } from '../../core/memory/process-flags';
import type { ProcessTrend } from '../../core/memory/sample-summary';
import type { MemorySample } from '../../core/memory/samples';
import { renderMonitorReport } from '../../main/cli/render-monitor';
import type { DescendantSource } from '../../main/memory/descendant-watcher';
import type { ProcReader } from '../../main/memory/proc-reader';
import { ProcessTracker } from '../../main/memory/process-tracker';

// The two monitor recordings made on an H200 (test/gpu/programs/record_diagnose.sh), replayed through the process
// tracker with what the descendant watcher would have recorded while the programs ran. Both recordings show the bug:
// NVML's listings reached the tracker about a second late, the processes were gone from /proc by then, and they were
// reported with "command": null, "relation": null. Here /proc is what the tracker found then: nothing at all.
const ROOT = join(__dirname, '../../..');
const fixture = (name: string) => JSON.parse(readFileSync(join(ROOT, 'test/fixtures/programs/h200', name), 'utf8')) as MonitorReport;
const HOG = fixture('monitor-hog.json');
const LEAK = fixture('monitor-ctypes-leak.json');
// hog.py's helper, as the kernel would show its command line (/proc/PID/cmdline: arguments separated by NULs).
const HOLDER = /HOLDER = """([\s\S]*?)"""/.exec(readFileSync(join(ROOT, 'samples/programs/pytorch-oom-other-process/hog.py'), 'utf8'))![1]!;
const HOLDER_COMMAND = commandLineOf(['/usr/bin/python3', '-c', HOLDER, 'cache-server'].join('\0'))!;

/** A /proc in which the given processes run, and no other. */
function procWith(running: Record<number, { ppid: number; startTime: number; cmdline: string }> = {}): ProcReader {
  const stat = (pid: number): ProcStat | null => {
    const p = running[pid];
    return p ? { pid, comm: p.cmdline.split(' ')[0]!.split('/').pop()!.slice(0, 15), state: 'S', ppid: p.ppid, pgrp: pid, startTime: p.startTime } : null;
  };
  return {
    namespace: 'initial',
    stat,
    parentOf: (pid: number) => stat(pid)?.ppid ?? null,
    uid: (pid: number) => (running[pid] ? 1000 : null),
    userName: () => 'ana',
    cmdline: async (pid: number) => running[pid]?.cmdline ?? null,
  } as unknown as ProcReader;
}

function sourceOf(records: DescendantRecord[]): DescendantSource & { asked: [number, number | null][] } {
  const asked: [number, number | null][] = [];
  return {
    asked,
    recordOf: (pid, startTime) => {
      asked.push([pid, startTime]);
      const mine = records.filter((r) => r.pid === pid && (startTime === null || r.startTime === startTime));
      return mine.sort((a, b) => b.startTime - a.startTime)[0] ?? null;
    },
    commandOf: async (r) => r.command,
  };
}

const holderRecord: DescendantRecord = {
  pid: 1234,
  startTime: 2_000_610,
  ppid: 1215,
  ancestors: [1215],
  comm: 'python3',
  command: HOLDER_COMMAND,
  commandReads: 2,
  firstSeenUs: HOG.startedAtUs + 6_400_000,
  lastSeenUs: HOG.startedAtUs + 6_875_000,
};

/** Replays a recording: the tracker is fed NVML's listings (pids and sizes only) as they came, then the report is built. */
async function replay(recorded: MonitorReport, tracker: ProcessTracker): Promise<MonitorReport> {
  const times = [...new Set(recorded.processes.flatMap((p) => [p.firstUs, p.peakAtUs ?? p.firstUs, p.lastUs]))].sort((a, b) => a - b);
  for (const timeUs of times) {
    const listed = recorded.processes.filter((p) => p.firstUs <= timeUs && timeUs <= p.lastUs);
    const sample: MemorySample = { timeUs, devices: [], processes: listed.map((p) => ({ device: p.device, pid: p.pid, usedBytes: p.peakBytes })) };
    tracker.observe(sample);
    tracker.refresh(timeUs + 1_000_000, timeUs);
  }
  await tracker.named();
  const trends: ProcessTrend[] = recorded.processes.map(({ command: _c, relation: _r, flag: _f, growth: _g, parents: _p, ...trend }) => trend);
  return buildMonitorReport({
    ...recorded,
    devices: recorded.series.devices,
    reservedBytes: recorded.devices.map((d) => d.reservedBytes),
    deviceTrends: recorded.devices,
    processTrends: trends,
    processes: tracker.all(),
    relations: tracker.relations(),
    parents: tracker.parents(),
  });
}

test('hog.py on the H200: its helper, gone from /proc when first listed, is named from the record, as the program’s child', async () => {
  assert.equal(HOG.processes.find((p) => p.pid === 1234)!.command, null, 'the recording shows the bug');
  const tracker = new ProcessTracker(procWith(), { targetPid: null, hostPid: 99 }, async () => null);
  const source = sourceOf([holderRecord]);
  tracker.followDescendants(source);
  tracker.setTarget(1215, HOG.target!.command);
  const report = await replay(HOG, tracker);
  assert.deepEqual(source.asked[0], [1234, null], 'gone: asked by pid alone');

  const child = report.processes.find((p) => p.pid === 1234)!;
  assert.equal(child.command, HOLDER_COMMAND);
  assert.equal(child.relation, 'target-descendant');
  assert.deepEqual(child.parents, [1215]);
  assert.equal(child.flag, null, 'a child of the program is never foreign');
  const program = report.processes.find((p) => p.pid === 1215)!;
  assert.equal(program.command, 'python3 samples/programs/pytorch-oom-other-process/hog.py');
  assert.equal(program.relation, 'target');
  assert.equal(program.parents, null);

  const text = renderMonitorReport(report);
  const line = text.split('\n').find((l) => l.includes('PID 1234'))!;
  assert.match(line, /PID 1234 {2}\/usr\/bin\/python3 -c \?import sys, time, torch\?.* … .*cache-server {2}\[started by the monitored process\] {2}on GPU 0/);
  assert.ok(line.length < 240, `a python -c script is cut in the middle in the text: ${line}`);
  assert.match(text, /PID 1215 {2}python3 samples\/programs\/pytorch-oom-other-process\/hog\.py {2}\[the monitored process\]/);
  assert.doesNotMatch(text, /command unknown/);
  // The JSON keeps the whole command line.
  assert.equal(JSON.parse(JSON.stringify(report)).processes.find((p: { pid: number }) => p.pid === 1234).command, HOLDER_COMMAND);
});

test('the ctypes leak on the H200: the program, gone before its listing was read, carries the command it was started with', async () => {
  assert.equal(LEAK.processes[0]!.command, null, 'the recording shows the bug');
  const tracker = new ProcessTracker(procWith(), { targetPid: null, hostPid: 99 }, async () => null);
  tracker.followDescendants(sourceOf([]));
  tracker.setTarget(LEAK.target!.pid, LEAK.target!.command);
  const report = await replay(LEAK, tracker);
  const program = report.processes[0]!;
  assert.equal(program.command, 'python3 samples/programs/ctypes-leak/leak.py');
  assert.equal(program.relation, 'target');
  assert.match(renderMonitorReport(report), /PID 1273 {2}python3 samples\/programs\/ctypes-leak\/leak\.py {2}\[the monitored process\]/);
});

test('the target named after it was first listed (a pid given later) gets its command and relation then', async () => {
  const tracker = new ProcessTracker(procWith(), { targetPid: null, hostPid: 99 }, async () => null);
  tracker.observe({ timeUs: 1, devices: [], processes: [{ device: 0, pid: 1273, usedBytes: 1 }] });
  await tracker.named();
  assert.equal(tracker.all()[0]!.command, null);
  tracker.setTarget(1273, 'python3 leak.py');
  assert.equal(tracker.all()[0]!.command, 'python3 leak.py');
  assert.equal(tracker.relations().get(1273), 'target');
});

test('a grandchild re-parented away from the program (its parent ended) is still the program’s, through its parent', async () => {
  // /proc now: 1300 runs, but its parent 1250 ended and it was re-parented to init. The watcher saw it under 1250.
  const tracker = new ProcessTracker(
    procWith({ 1300: { ppid: 1, startTime: 777, cmdline: 'python3 server.py' } }),
    { targetPid: 1215, hostPid: 99 },
    async () => null,
  );
  const grandchild: DescendantRecord = { ...holderRecord, pid: 1300, startTime: 777, ppid: 1250, ancestors: [1250, 1215], command: 'python3 server.py' };
  // Another record of pid 1300, of an earlier process: not this one.
  const earlier: DescendantRecord = { ...holderRecord, pid: 1300, startTime: 500, command: 'sleep 1' };
  const source = sourceOf([earlier, grandchild]);
  tracker.followDescendants(source);
  tracker.observe({ timeUs: 10, devices: [], processes: [{ device: 0, pid: 1300, usedBytes: 2 ** 30 }] });
  await tracker.named();
  tracker.refresh(20, 10);
  assert.deepEqual(source.asked, [[1300, 777]], 'alive: asked by pid and start time');
  const p = tracker.all()[0]!;
  assert.equal(p.command, 'python3 server.py');
  assert.equal(p.flag, null, 'not foreign: the program started it');
  assert.equal(tracker.relations().get(1300), 'target-descendant');
  assert.deepEqual(tracker.parents().get(1300), [1250, 1215]);

  const trend: ProcessTrend = {
    device: 0,
    pid: 1300,
    samples: 1,
    unknownSamples: 0,
    firstUs: 10,
    lastUs: 10,
    firstBytes: 2 ** 30,
    lastBytes: 2 ** 30,
    peakBytes: 2 ** 30,
    peakAtUs: 10,
    rises: 0,
    falls: 0,
  };
  const report = buildMonitorReport({
    ...HOG,
    devices: [],
    reservedBytes: [],
    deviceTrends: [],
    processTrends: [trend],
    processes: tracker.all(),
    relations: tracker.relations(),
    parents: tracker.parents(),
  });
  assert.match(renderMonitorReport(report), /PID 1300 {2}python3 server\.py {2}\[started by the monitored process, through PID 1250\]/);
});

test('without a record, a process gone when first listed stays unnamed and unrelated, as before', async () => {
  const tracker = new ProcessTracker(procWith(), { targetPid: 1215, hostPid: 99 }, async () => null);
  tracker.followDescendants(sourceOf([]));
  tracker.observe({ timeUs: 10, devices: [], processes: [{ device: 0, pid: 4444, usedBytes: 1 }] });
  await tracker.named();
  assert.equal(tracker.all()[0]!.command, null);
  assert.equal(tracker.relations().get(4444), null);
  assert.equal(tracker.parents().size, 0);
});
