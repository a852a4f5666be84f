import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { DoctorCheck } from '../../core/discovery';
import { normalizeBusId } from '../../core/doctor/device-order-rules';
import { parseDoctorFacts, type DoctorFacts } from '../../core/doctor/facts';
import { flagProcess } from '../../core/memory/process-flags';
import { gatherDoctorFacts } from '../../main/doctor/gather';
import { checksById } from '../helpers/doctor-facts';
import { forkLauncher } from '../../main/process/launcher';
import { readPlanFile } from '../../main/services/plan-files';
import { createWorkbench } from '../../main/workbench';
import { parseJson, runCli, SAMPLES } from '../helpers/cli';

// The doctor on a real GPU: what it reads from NVML and the driver agrees with nvidia-smi, every check that can
// run there ran, and its facts are recorded as fixtures ($GPU_WORKBENCH_FIXTURES_OUT/doctor-facts.json, to commit
// as test/fixtures/env/h100/doctor-facts.json, which test/unit/doctor-evaluate.test.ts then judges everywhere).

const out = process.env['GPU_WORKBENCH_FIXTURES_OUT'] ?? mkdtempSync(join(tmpdir(), 'doctor-gpu-'));
const smi = (query: string) =>
  execFileSync('nvidia-smi', [`--query-gpu=${query}`, '--format=csv,noheader'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.split(',').map((s) => s.trim()));

interface DoctorJson {
  checks: DoctorCheck[];
  facts: DoctorFacts;
}

/** Checks whose facts exist on any machine with a driver and NVML: none may be "not run" here. */
const MUST_RUN = [
  'driver',
  'devices',
  'nvml',
  'driver-version',
  'nvrtc-vs-driver',
  'nvrtc-arch',
  'device-order',
  'gpu-reset',
  'compute-mode',
  'mig-mode',
  'clock-limits',
];

test('doctor on the GPU: driver and NVML agree with nvidia-smi, the checks that can run ran, and the facts are recorded', async () => {
  const factsFile = join(out, 'doctor-facts.json');
  const r = await runCli(['doctor', '--json', '--facts-out', factsFile]);
  const { checks, facts } = parseJson<DoctorJson>(r);
  const by = Object.fromEntries(checks.map((c) => [c.id, c]));
  for (const c of checks) console.log(`# ${c.status.padEnd(7)} ${c.id}: ${c.detail.slice(0, 160)}`);
  writeFileSync(join(out, 'doctor-report.json'), r.stdout);

  const rows = smi('index,pci.bus_id,uuid,driver_version,persistence_mode,compute_mode,mig.mode.current');
  assert.equal(facts.nvml.status, 'ok', JSON.stringify(facts.nvml));
  assert.ok(facts.nvml.status === 'ok');
  const nvml = facts.nvml.value;
  assert.ok(nvml.driverVersion.ok);
  assert.equal(nvml.driverVersion.value, rows[0]![3]);
  assert.match(nvml.driverVersion.value, /^580\./, 'the H100 machine runs driver 580');
  assert.equal(nvml.devices.length, rows.length);
  for (const [index, bus, uuid, , persistence, computeMode, mig] of rows) {
    const d = nvml.devices[Number(index)]!;
    assert.ok(d.pciBusId.ok && d.uuid.ok && d.persistenceMode.ok && d.computeMode.ok);
    assert.equal(normalizeBusId(d.pciBusId.value), normalizeBusId(bus!));
    assert.equal(d.uuid.value, uuid);
    assert.equal(d.persistenceMode.value, persistence === 'Enabled');
    assert.equal({ 0: 'Default', 1: 'Exclusive_Thread', 2: 'Prohibited', 3: 'Exclusive_Process' }[d.computeMode.value], computeMode);
    if (d.migMode.ok) assert.equal(d.migMode.value.current === 1 ? 'Enabled' : 'Disabled', mig);
    else assert.equal(mig, '[N/A]');
  }
  assert.equal(by['driver']!.status, 'ok');
  assert.match(by['driver-version']!.detail, /Driver 580\./);
  assert.equal(by['compute-mode']!.status, 'ok');
  assert.match(by['compute-mode']!.detail, /compute mode DEFAULT/);
  for (const id of MUST_RUN) assert.ok(by[id] && by[id].status !== 'not-run', `${id}: ${JSON.stringify(by[id])}`);
  // nvcc's own target list, where the machine has an nvcc: asked, and the GPU found in it (CUDA 13.0 lists sm_90).
  if (facts.discovery.nvcc.found) {
    assert.equal(facts.nvccTargets?.status, 'ok', JSON.stringify(facts.nvccTargets));
    assert.equal(by['nvcc-arch']!.status, 'ok', by['nvcc-arch']!.detail);
  }
  assert.ok(parseDoctorFacts(facts).ok);
  assert.equal(r.code, checks.some((c) => c.status === 'fail') ? 1 : 0);
  console.log(`# facts written to ${factsFile} (${(r.ms / 1000).toFixed(2)} s for the whole doctor)`);
});

test('with a workbench runner holding a context: NVML lists it, and the doctor names it as the workbench (or says it cannot look it up)', async () => {
  const workbench = createWorkbench(forkLauncher, { warmSpare: false });
  try {
    const { plan } = await readPlanFile(join(SAMPLES, 'vector-add/plan.json'));
    const outcome = await workbench.runPlan(plan, { timeoutMs: 60_000 });
    assert.equal(outcome.status, 'ok', outcome.diagnosis.headline);
    const runners = workbench.pool.status().runners.map((r) => r.pid);
    const facts = await gatherDoctorFacts();
    writeFileSync(join(out, 'doctor-facts-busy.json'), JSON.stringify(facts, null, 2) + '\n');
    assert.equal(facts.processes.status, 'ok', JSON.stringify(facts.processes));
    assert.ok(facts.processes.status === 'ok');
    const p = facts.processes.value;
    const flagOf = (x: (typeof p.processes)[number]) =>
      flagProcess({ ...x, namespace: p.namespace })?.kind ?? (x.relation === 'workbench' ? 'workbench' : 'none');
    const listed = p.processes.map((x) => `${x.pid} ${x.nvmlName} ${x.liveness} ${flagOf(x)}`);
    console.log(`# runners ${runners.join(', ')}; NVML lists: ${listed.join('; ') || 'nothing'}; PID namespace: ${p.namespace}`);
    const runner = p.processes.find((x) => runners.includes(x.pid));
    if (runner) {
      // NVML gives PIDs as this process sees them (the machine's own namespace, or a driver that translates).
      assert.equal(runner.liveness, 'alive');
      assert.equal(runner.relation, 'workbench');
      assert.equal(flagProcess({ ...runner, namespace: p.namespace }), null);
      assert.equal(checksById(facts)['gpu-processes']!.status, 'ok');
    } else {
      // NVML gives the host's PIDs in a container: whatever it lists that is not here is said to be not visible.
      assert.equal(p.namespace, 'nested', `the runner is missing from NVML's list in the machine's own PID namespace: ${listed.join('; ')}`);
      for (const x of p.processes.filter((x) => x.liveness !== 'alive')) assert.equal(flagOf(x), 'not-visible');
    }
  } finally {
    await workbench.dispose();
  }
});

test('a limit shorter than the driver takes: the doctor still answers, promptly, saying what did not answer', async () => {
  const r = await runCli(['doctor', '--json', '--timeout', '0.1'], { timeoutMs: 30_000 });
  const { checks, facts } = parseJson<DoctorJson>(r);
  const late = [facts.cudaDevices, facts.nvml, facts.processes, facts.installations].filter((c) => c.status === 'timed-out');
  console.log(`# with 0.1 s per query: ${late.length} part(s) ran over, whole doctor ${(r.ms / 1000).toFixed(2)} s, exit ${r.code}`);
  for (const c of late) assert.match(c.status === 'timed-out' ? c.detail : '', /did not answer within 0\.1 s/);
  assert.ok(r.ms < 20_000, `exited after ${r.ms} ms`);
  assert.ok(checks.length > 5);
});
