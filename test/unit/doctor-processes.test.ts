import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { GpuProcessFact, ProcessFacts } from '../../core/doctor/facts';
import { answered, checksById, facts, gpuProcess } from '../helpers/doctor-facts';

// The flag each process gets is the memory monitor's rule (core/memory/process-flags.ts, tested in
// monitor-process-flags.test.ts); these tests are about the doctor's verdict over it.

function withProcesses(processes: GpuProcessFact[], over: { namespace?: ProcessFacts['namespace']; processesListed?: boolean } = {}) {
  return facts({
    processes: answered({
      namespace: over.namespace ?? 'initial',
      devices: [{ index: 0, totalBytes: 80 * 2 ** 30, usedBytes: 10 * 2 ** 30, processesListed: over.processesListed ?? true }],
      processes,
    }),
  });
}

const gone = (pid: number, over: Partial<GpuProcessFact> = {}) =>
  gpuProcess(pid, { liveness: 'absent', relation: null, owner: null, ppid: null, command: null, listedAfterGoneUs: 1_200_000, ...over });

test('a dead process still holding memory after a second look: a warning with its PID, its memory and what holds the GPU', () => {
  const c = checksById(withProcesses([gone(4242)]))['gpu-processes']!;
  assert.equal(c.status, 'warn');
  assert.equal(c.area, 'processes');
  assert.match(c.detail, /PID 4242 \(python3\) 3 GiB, EXITED: PID 4242 has exited, yet the driver still counts 3 GiB on GPU 0 for it 1\.2 s later/);
  assert.match(c.remedy!, /fuser -v \/dev\/nvidia\*/);
});

test('one seen gone but released within the grace is a teardown, not a problem', () => {
  const c = checksById(withProcesses([gone(4242, { listedAfterGoneUs: 0 })]))['gpu-processes']!;
  assert.equal(c.status, 'ok');
  assert.match(c.detail, /exiting \(NVML lets go of it shortly\)/);
});

test('a zombie holding memory names the parent that has not reaped it', () => {
  const c = checksById(withProcesses([gone(77, { liveness: 'zombie', parent: { pid: 70, command: 'python3 launcher.py' } })]))['gpu-processes']!;
  assert.equal(c.status, 'warn');
  assert.match(c.detail, /still a zombie/);
  assert.match(c.remedy!, /PID 70 \(python3 launcher\.py\) reaps it/);
});

test('in a container a PID NVML gives may name nothing here: not checked, never passed', () => {
  const c = checksById(withProcesses([gone(9)], { namespace: 'nested' }))['gpu-processes']!;
  assert.equal(c.status, 'not-run');
  assert.match(c.detail, /not visible here: NVML lists PID 9 .* this container cannot see it/);
  assert.match(c.remedy!, /--pid=host/);
});

test("other programs: listed with their owner; a warning only when they hold most of the GPU's memory; a PID 1 parent is said", () => {
  const small = checksById(withProcesses([gpuProcess(500, { ppid: 1, usedBytes: 2 ** 30 })]))['gpu-processes']!;
  assert.equal(small.status, 'ok');
  assert.match(small.detail, /PID 500 \(python3 train\.py\) 1 GiB, another program \(alice\), its parent is PID 1 \(a service, or an orphan/);
  const big = checksById(withProcesses([gpuProcess(500, { usedBytes: 60 * 2 ** 30, owner: { name: 'me', mine: true } })]))['gpu-processes']!;
  assert.equal(big.status, 'warn');
  assert.match(big.detail, /another program \(yours\).*Other programs hold 60 GiB of its 80 GiB/);
  const ours = checksById(withProcesses([gpuProcess(600, { relation: 'workbench' })]))['gpu-processes']!;
  assert.equal(ours.status, 'ok');
  assert.match(ours.detail, /600 \(python3 train\.py\) 3 GiB, the workbench/);
});

test('an idle GPU passes; a GPU whose processes NVML cannot list is not checked', () => {
  assert.match(checksById(withProcesses([]))['gpu-processes']!.detail, /GPU 0: no process holds memory on it/);
  assert.equal(checksById(withProcesses([]))['gpu-processes']!.status, 'ok');
  assert.equal(checksById(withProcesses([], { processesListed: false }))['gpu-processes']!.status, 'not-run');
});
