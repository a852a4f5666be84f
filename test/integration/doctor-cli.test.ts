import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { DoctorCheck } from '../../core/discovery';
import { parseDoctorFacts, type DoctorFacts } from '../../core/doctor/facts';
import { flagProcess } from '../../core/memory/process-flags';
import { doctorReport } from '../../main/bundle/bundle-service';
import { findNvcc } from '../../main/compile/nvcc';
import { findInstallations } from '../../main/doctor/installations';
import { lookUpProcess, processFacts } from '../../main/doctor/process-facts';
import { ProcReader } from '../../main/memory/proc-reader';
import type { NvmlSnapshotRaw } from '../../main/native/addon';
import { discoverLibraries } from '../../main/services/discovery-service';
import { parseJson, ROOT, runCli } from '../helpers/cli';
import { discovery } from '../helpers/doctor-facts';

const hasDriver = discoverLibraries().cuda.loaded;
const noStack = (text: string) => assert.doesNotMatch(text, /\n\s+at .+[:(].*\d+:\d+\)?/, 'no stack trace');
const HAND_WRITTEN = join(ROOT, 'test/fixtures/env/h100/doctor-facts.hand-written.json');
const tmp = mkdtempSync(join(tmpdir(), 'doctor-cli-'));

interface DoctorJson {
  checks: DoctorCheck[];
  facts: DoctorFacts;
}

test(
  'doctor --json with no driver: a clear report, every GPU check not run, exit 2 as before',
  { skip: hasDriver && 'this machine has a driver' },
  async () => {
    const r = await runCli(['doctor', '--json']);
    assert.equal(r.code, 2, r.stderr);
    const out = parseJson<DoctorJson & { discovery: unknown }>(r);
    const by = Object.fromEntries(out.checks.map((c) => [c.id, c]));
    assert.equal(by['driver']!.status, 'fail');
    assert.equal(by['driver']!.detail, 'No NVIDIA driver found');
    assert.ok(by['driver']!.searched!.some((s) => s.startsWith('libcuda.so.1 (loader path)')));
    for (const id of ['gpu-state', 'gpu-processes', 'device-order']) assert.equal(by[id]!.status, 'not-run', id);
    assert.match(by['gpu-state']!.detail, /NVML \(libnvidia-ml\.so\.1\), which ships with the NVIDIA driver, was not found/);
    assert.equal(out.facts.nvml.status, 'skipped');
    assert.equal(out.facts.cudaDevices.status, 'skipped');
    assert.equal(out.facts.installations.status, 'ok');
    assert.deepEqual(out.discovery, out.facts.discovery);
    assert.ok(parseDoctorFacts(out.facts).ok, 'what it prints is what --facts reads');
    noStack(r.stdout + r.stderr);
  },
);

test('doctor (text) groups the checks and explains the marks', async () => {
  const r = await runCli(['doctor']);
  for (const heading of ['Driver and libraries', 'Compilers and toolkits', 'Environment', 'GPU state', 'Processes on the GPU'])
    assert.match(r.stdout, new RegExp(`^${heading}$`, 'm'));
  assert.match(r.stdout, /– could not be checked\)$/m);
  noStack(r.stdout + r.stderr);
});

test('--facts-out records the facts, and --facts judges them to the same report', async () => {
  const file = join(tmp, 'facts.json');
  const live = await runCli(['doctor', '--json', '--facts-out', file]);
  const recorded = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  assert.ok(parseDoctorFacts(recorded).ok);
  const again = await runCli(['doctor', '--json', '--facts', file]);
  assert.equal(again.code, live.code);
  const statuses = (r: typeof live) => parseJson<DoctorJson>(r).checks.map((c) => `${c.id}:${c.status}`);
  assert.deepEqual(statuses(again), statuses(live));
  // A doctor --json report (or a bundle's doctor.json) holds the facts too.
  const report = join(tmp, 'doctor.json');
  writeFileSync(report, live.stdout);
  assert.deepEqual(statuses(await runCli(['doctor', '--json', '--facts', report])), statuses(live));
});

test('--facts with the hand-written H100 facts: every check they hold passes, exit 0, and it says whose facts they are', async () => {
  const r = await runCli(['doctor', '--facts', HAND_WRITTEN]);
  assert.equal(r.code, 0, r.stdout);
  assert.match(r.stdout, /^Facts recorded 2026-11-23T14:55:13\.000Z — HAND-WRITTEN/);
  assert.match(r.stdout, /✓ Compute mode: compute mode DEFAULT/);
  // Written before the doctor asked nvcc for its targets: that one check is said to be not made.
  assert.match(r.stdout, /^1 not checked, \d+ passed \(/m);
  assert.match(r.stdout, /nvcc targets this GPU's architecture: Not checked: these facts were gathered before/);
});

test('bad doctor inputs: one clear message and exit 64', async () => {
  const notFacts = join(tmp, 'not-facts.json');
  writeFileSync(notFacts, JSON.stringify({ checks: [] }));
  const notJson = join(tmp, 'not-json.json');
  writeFileSync(notJson, '{ nope');
  const cases: [string[], RegExp][] = [
    [['doctor', '--facts', notFacts], /does not hold doctor facts/],
    [['doctor', '--facts', notJson], /is not valid JSON/],
    [['doctor', '--facts', join(tmp, 'absent.json')], /does not exist/],
    [['doctor', '--timeout', '0'], /--timeout is seconds/],
    [['doctor', '--facts', HAND_WRITTEN, '--facts-out', join(tmp, 'x.json')], /give one/],
  ];
  for (const [args, message] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, 64, `${args.join(' ')}\n${r.stdout}${r.stderr}`);
    assert.match(r.stdout + r.stderr, message, args.join(' '));
    noStack(r.stdout + r.stderr);
  }
});

test("a bundle's doctor report carries the checks and the facts", async () => {
  const report = (await doctorReport(4000)) as DoctorJson;
  assert.ok(Array.isArray(report.checks) && report.checks.length > 0);
  assert.ok(parseDoctorFacts(report.facts).ok);
});

const entry = (pid: number) => ({ device: 0, pid, usedBytes: 1024, name: 'x' });
const proc = new ProcReader();

async function exitedPid(): Promise<number> {
  const child = spawn('true');
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

test('looking up processes: this one is the workbench, an exited one is absent, a zombie names its parent', async () => {
  const self = await lookUpProcess(entry(process.pid), proc);
  assert.equal(self.liveness, 'alive');
  assert.equal(self.relation, 'workbench');
  assert.match(self.command ?? '', /node/);
  assert.equal(self.owner?.mine, true);
  assert.equal((await lookUpProcess(entry(await exitedPid()), proc)).liveness, 'absent');
  // A zombie: sh starts a short sleep in the background, then becomes a long sleep, which never collects it.
  const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const pid = Number(await new Promise<string>((r) => parent.stdout.once('data', (d: Buffer) => r(d.toString()))));
    let zombie = await lookUpProcess(entry(pid), proc);
    for (let i = 0; i < 100 && zombie.liveness !== 'zombie'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      zombie = await lookUpProcess(entry(pid), proc);
    }
    assert.equal(zombie.liveness, 'zombie');
    assert.equal(zombie.parent?.pid, parent.pid);
    assert.match(zombie.parent?.command ?? '', /sleep 30/);
  } finally {
    parent.kill('SIGKILL');
  }
});

const snapshotListing = (pids: number[]): NvmlSnapshotRaw => ({
  driverVersion: '580.159.04',
  devices: [
    {
      index: 0,
      uuid: 'GPU-x',
      name: 'NVIDIA H100 80GB HBM3',
      memory: { totalBytes: 8e10, freeBytes: 7e10, usedBytes: 1e10 },
      processes: pids.map((pid) => ({ pid, usedBytes: 2 ** 30, name: 'python3' })),
    },
  ],
});

test('a process seen gone gets a second look: still listed, it is flagged exited; let go of, it was a teardown', async () => {
  const dead = await exitedPid();
  const lingering = await processFacts(snapshotListing([dead, process.pid]), async () => snapshotListing([dead, process.pid]), proc, 50);
  const p = lingering.processes.find((x) => x.pid === dead)!;
  assert.ok(p.listedAfterGoneUs >= 50_000, String(p.listedAfterGoneUs));
  // The monitor's rule wants a second of grace; its verdict on this fact once that has passed:
  const kind = flagProcess({ ...p, listedAfterGoneUs: 1_000_000, namespace: lingering.namespace })?.kind;
  assert.equal(kind, proc.namespace === 'initial' ? 'exited' : 'not-visible');
  const released = await processFacts(snapshotListing([dead, process.pid]), async () => snapshotListing([process.pid]), proc, 50);
  assert.deepEqual(
    released.processes.map((x) => x.pid),
    [process.pid],
  );
  const idle = await processFacts(snapshotListing([process.pid]), () => Promise.reject(new Error('no second look needed')), proc, 50);
  assert.equal(idle.processes.length, 1);
});

test('CUDA installations: /usr/local toolkits by version.json or dist-info, a symlink resolved, wheels, a missing CUDA_HOME', async () => {
  const root = mkdtempSync(join(tmpdir(), 'doctor-toolkits-'));
  const usrLocal = join(root, 'usr-local');
  mkdirSync(join(usrLocal, 'cuda-12.4/bin'), { recursive: true });
  writeFileSync(join(usrLocal, 'cuda-12.4/version.json'), JSON.stringify({ cuda: { name: 'CUDA SDK', version: '12.4.1' } }));
  mkdirSync(join(usrLocal, 'cuda-13.0/dist-info/nvidia_cuda_nvcc-13.0.88.dist-info'), { recursive: true });
  mkdirSync(join(usrLocal, 'cuda-13.0/bin'), { recursive: true });
  writeFileSync(join(usrLocal, 'cuda-13.0/bin/nvcc'), '');
  symlinkSync(join(usrLocal, 'cuda-13.0'), join(usrLocal, 'cuda'));
  mkdirSync(join(usrLocal, 'cudnn'), { recursive: true }); // not a toolkit
  const site = join(root, 'site-packages');
  mkdirSync(join(site, 'nvidia/cu13/lib'), { recursive: true });
  writeFileSync(join(site, 'nvidia/cu13/lib/libnvrtc.so.13'), '');
  mkdirSync(join(site, 'nvidia/cudnn/lib'), { recursive: true });
  mkdirSync(join(site, 'nvidia_cuda_nvrtc-13.0.48.dist-info'));
  const found = await findInstallations(discovery({ nvcc: { found: true, path: join(usrLocal, 'cuda/bin/nvcc'), version: 'CUDA 13.0', searched: [] } }), {
    usrLocal,
    sitePackages: [site],
    env: { CUDA_HOME: join(root, 'gone') },
  });
  const byRoot = Object.fromEntries(found.toolkits.map((t) => [t.root.slice(root.length), t]));
  assert.deepEqual(Object.keys(byRoot).sort(), ['/gone', '/site-packages/nvidia/cu13', '/usr-local/cuda', '/usr-local/cuda-12.4', '/usr-local/cuda-13.0']);
  assert.equal(byRoot['/usr-local/cuda-12.4']!.version, '12.4.1');
  assert.equal(byRoot['/usr-local/cuda']!.version, '13.0.88');
  assert.equal(byRoot['/usr-local/cuda']!.realRoot, join(usrLocal, 'cuda-13.0'));
  assert.equal(byRoot['/site-packages/nvidia/cu13']!.version, '13.0.48');
  assert.equal(byRoot['/site-packages/nvidia/cu13']!.foundAs, 'python wheel');
  assert.equal(byRoot['/gone']!.realRoot, null);
  assert.equal(found.nvccRealPath, join(usrLocal, 'cuda-13.0/bin/nvcc'));
  assert.equal(found.cudaHome, join(root, 'gone'));
});

// nvcc's targets: asked of the real nvcc where one is installed (CUDA 13.0's here), and of stand-ins for an nvcc
// that misbehaves — too old to know the option (its recorded words), hung, or printing without end.
test("doctor asks nvcc for its targets: CUDA 13.0's lists, as the fixture recorded them; without a GPU the check is not run, never passed", async (t) => {
  const nvccHere = await findNvcc();
  if (!nvccHere.found) return t.skip('no nvcc on this machine');
  const r = await runCli(['doctor', '--json']);
  const { checks, facts } = parseJson<DoctorJson>(r);
  assert.equal(facts.nvccTargets?.status, 'ok', JSON.stringify(facts.nvccTargets));
  assert.ok(facts.nvccTargets?.status === 'ok');
  assert.equal(facts.nvccTargets.value.path, nvccHere.path);
  if (/^CUDA 13\.0 /.test(nvccHere.version ?? '')) {
    const listed = (name: string) =>
      readFileSync(join(ROOT, 'test/fixtures/env/nvcc-13.0', name), 'utf8')
        .trim()
        .split('\n');
    assert.deepEqual(
      facts.nvccTargets.value.sass.map((a) => `sm_${a}`),
      listed('list-gpu-code.txt'),
    );
    assert.deepEqual(
      facts.nvccTargets.value.ptx.map((a) => `compute_${a}`),
      listed('list-gpu-arch.txt'),
    );
  }
  const check = checks.find((c) => c.id === 'nvcc-arch')!;
  if (!hasDriver) {
    assert.equal(check.status, 'not-run');
    assert.match(check.detail, /no NVIDIA driver was found/);
  } else assert.notEqual(check.status, 'not-run', check.detail);
});

test('an nvcc that cannot say its targets — an old one, a hung one, a flood — is a fact of its own, bounded in time and size; the check is not run', async () => {
  const fake = (name: string, body: string) => {
    const path = join(tmp, `nvcc-${name}`);
    writeFileSync(path, `#!/bin/bash\nif [ "$1" = --version ]; then printf 'Cuda compilation tools, release 13.0, V13.0.88\\n'; exit 0; fi\n${body}\n`, {
      mode: 0o755,
    });
    return path;
  };
  const unknown = join(ROOT, 'test/fixtures/env/nvcc-13.0/unknown-option.txt');
  const cases: [string, string, RegExp][] = [
    [
      'old',
      `sed "s/--list-gpu-codes/$1/" '${unknown}' >&2; exit 1`,
      /`nvcc --list-gpu-(code|arch)` exited with 1: nvcc fatal\s+: Unknown option '--list-gpu-(code|arch)'/,
    ],
    ['hung', 'exec sleep 30', /did not answer within 1 s/],
    ['flood', 'exec yes sm_90', /printed more than 64 KiB/],
  ];
  for (const [name, body, why] of cases) {
    const started = performance.now();
    const r = await runCli(['doctor', '--json', '--timeout', '1'], { env: { GPU_WORKBENCH_NVCC: fake(name, body) } });
    const { checks, facts } = parseJson<DoctorJson>(r);
    assert.ok(performance.now() - started < 15_000, `${name}: the doctor waited ${Math.round(performance.now() - started)} ms`);
    const t = facts.nvccTargets!;
    assert.ok(t.status === 'failed' || t.status === 'timed-out', `${name}: ${JSON.stringify(t)}`);
    assert.match(t.detail, why, name);
    const check = checks.find((c) => c.id === 'nvcc-arch')!;
    assert.equal(check.status, 'not-run', `${name}: ${check.detail}`);
    noStack(r.stdout + r.stderr);
  }
  // Nothing it started is left running.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const { listProcesses } = await import('../../main/process/process-state');
  assert.deepEqual(
    listProcesses().filter((p) => /^(sleep 30|yes sm_90)$/.test(p.cmdline)),
    [],
  );
});
