import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { GpuProcessFact } from '../../core/doctor/facts';
import { describeProcessFlag, processFlagKind } from '../../core/doctor/process-rules';
import { answered, checksById, facts, gpuProcess } from '../helpers/doctor-facts';

const seenHere = { pidNamespaceNested: false, procHidesOthers: false };

function withProcesses(processes: GpuProcessFact[], over: { pidNamespaceNested?: boolean; procHidesOthers?: boolean; processesListed?: boolean } = {}) {
  return facts({
    processes: answered({
      pidNamespaceNested: over.pidNamespaceNested ?? false,
      procHidesOthers: over.procHidesOthers ?? false,
      devices: [{ index: 0, totalBytes: 80 * 2 ** 30, usedBytes: 10 * 2 ** 30, processesListed: over.processesListed ?? true }],
      processes,
    }),
  });
}

test('the flag rule: exited, not visible, foreign, or the workbench own', () => {
  assert.equal(processFlagKind({ inProcTable: false, state: null, startedByWorkbench: false }, seenHere), 'exited');
  assert.equal(processFlagKind({ inProcTable: true, state: 'Z', startedByWorkbench: true }, seenHere), 'exited');
  assert.equal(processFlagKind({ inProcTable: true, state: 'S', startedByWorkbench: false }, seenHere), 'foreign');
  assert.equal(processFlagKind({ inProcTable: true, state: 'R', startedByWorkbench: true }, seenHere), null);
  assert.equal(processFlagKind({ inProcTable: true, state: 'S', startedByWorkbench: false }, { ...seenHere, pidNamespaceNested: true }), 'not-visible');
  assert.equal(processFlagKind({ inProcTable: false, state: null, startedByWorkbench: false }, { ...seenHere, procHidesOthers: true }), 'not-visible');
  assert.equal(processFlagKind({ inProcTable: null, state: null, startedByWorkbench: false }, seenHere), 'not-visible');
});

test('a dead process holding memory: a warning with its PID, its memory and how to get the memory back', () => {
  const c = checksById(withProcesses([gpuProcess(4242, { inProcTable: false, state: null, ppid: null, command: null, usedBytes: 3 * 2 ** 30 })]))[
    'gpu-processes'
  ]!;
  assert.equal(c.status, 'warn');
  assert.equal(c.area, 'processes');
  assert.match(
    c.detail,
    /PID 4242 \(python3\) 3 GiB, EXITED: PID 4242 is not in this system's process table, yet NVML still counts its memory: its context outlived it\.$/,
  );
  assert.match(c.remedy!, /GPU reset \(sudo nvidia-smi -i 0 -r/);
});

test('a zombie holding memory names its parent', () => {
  const c = checksById(withProcesses([gpuProcess(77, { state: 'Z', ppid: 70, command: null })]))['gpu-processes']!;
  assert.equal(c.status, 'warn');
  assert.match(c.detail, /has exited but its parent \(PID 70\) has not collected it/);
  assert.match(c.remedy!, /kill 70/);
  assert.match(describeProcessFlag('exited', { pid: 77, ppid: 70, state: 'Z', device: 0 }).fix, /collected/);
});

test('in a container the PIDs cannot be looked up: not checked, never passed', () => {
  const c = checksById(withProcesses([gpuProcess(9, { inProcTable: null, state: null, command: null, ppid: null })], { pidNamespaceNested: true }))[
    'gpu-processes'
  ]!;
  assert.equal(c.status, 'not-run');
  assert.match(c.detail, /cannot be looked up here/);
  assert.match(c.remedy!, /nvidia-smi on the host/);
});

test("other programs: listed; a warning only when they hold most of the GPU's memory; a PID 1 parent is said", () => {
  const small = checksById(withProcesses([gpuProcess(500, { ppid: 1, usedBytes: 2 ** 30 })]))['gpu-processes']!;
  assert.equal(small.status, 'ok');
  assert.match(small.detail, /PID 500 \(python3 train\.py\) 1 GiB, another program, its parent is PID 1/);
  const big = checksById(withProcesses([gpuProcess(500, { usedBytes: 60 * 2 ** 30 })]))['gpu-processes']!;
  assert.equal(big.status, 'warn');
  assert.match(big.detail, /Other programs hold 60 GiB of its 80 GiB/);
  const ours = checksById(withProcesses([gpuProcess(600, { startedByWorkbench: true })]))['gpu-processes']!;
  assert.equal(ours.status, 'ok');
  assert.match(ours.detail, /the workbench/);
});

test('an idle GPU passes; a GPU whose processes NVML cannot list is not checked', () => {
  assert.match(checksById(withProcesses([]))['gpu-processes']!.detail, /GPU 0: no process holds memory on it/);
  assert.equal(checksById(withProcesses([]))['gpu-processes']!.status, 'ok');
  assert.equal(checksById(withProcesses([], { processesListed: false }))['gpu-processes']!.status, 'not-run');
});
