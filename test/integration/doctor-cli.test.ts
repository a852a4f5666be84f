import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { DoctorCheck } from '../../core/discovery';
import { parseDoctorFacts, type DoctorFacts } from '../../core/doctor/facts';
import { processFlagKind } from '../../core/doctor/process-rules';
import { doctorReport } from '../../main/cli/bundle-export-command';
import { findInstallations } from '../../main/doctor/installations';
import { lookUpProcess, parseHidePid, parseNestedNamespace, parseProcStat } from '../../main/doctor/process-facts';
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

test('--facts with the hand-written H100 facts: every check passes, exit 0, and it says whose facts they are', async () => {
  const r = await runCli(['doctor', '--facts', HAND_WRITTEN]);
  assert.equal(r.code, 0, r.stdout);
  assert.match(r.stdout, /^Facts recorded 2026-11-23T14:55:13\.000Z — HAND-WRITTEN/);
  assert.match(r.stdout, /✓ Compute mode: compute mode DEFAULT/);
  assert.match(r.stdout, /^\d+ passed \(/m);
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

test('/proc parsing: a command name with spaces and parentheses, NSpid, hidepid', () => {
  assert.deepEqual(parseProcStat('42 (my (odd) name) Z 7 42 42 0 -1'), { state: 'Z', ppid: 7 });
  assert.equal(parseProcStat('garbage'), null);
  assert.equal(parseNestedNamespace('Name:\tx\nNSpid:\t27611\n'), false);
  assert.equal(parseNestedNamespace('NSpid:\t1234\t12\n'), true);
  assert.equal(parseNestedNamespace('Name:\tx\n'), null);
  assert.equal(parseHidePid('proc /proc proc rw,nosuid,hidepid=2 0 0\n'), true);
  assert.equal(parseHidePid('proc /proc proc rw,relatime 0 0\n'), false);
  assert.equal(parseHidePid('proc /proc proc rw,hidepid=off 0 0\n'), false);
});

const entry = (pid: number) => ({ device: 0, pid, usedBytes: 1024, name: 'x' });
const seen = { pidNamespaceNested: false, procHidesOthers: false };

test('looking up processes: this one is the workbench, an exited one and a zombie are exited', async () => {
  const self = await lookUpProcess(entry(process.pid), false);
  assert.equal(self.inProcTable, true);
  assert.equal(self.startedByWorkbench, true);
  assert.match(self.command ?? '', /node/);
  // A child that has exited and been collected: its PID is gone.
  const gone = spawn('true');
  await new Promise((r) => gone.on('exit', r));
  const exited = await lookUpProcess(entry(gone.pid!), false);
  assert.equal(exited.inProcTable, false);
  assert.equal(processFlagKind(exited, seen), 'exited');
  // A zombie: sh starts a short sleep in the background, then becomes a long sleep, which never collects it.
  const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    const pid = Number(await new Promise<string>((r) => parent.stdout.once('data', (d: Buffer) => r(d.toString()))));
    let zombie = await lookUpProcess(entry(pid), false);
    for (let i = 0; i < 100 && zombie.state !== 'Z'; i++) {
      await new Promise((r) => setTimeout(r, 20));
      zombie = await lookUpProcess(entry(pid), false);
    }
    assert.equal(zombie.state, 'Z');
    assert.equal(zombie.ppid, parent.pid);
    assert.equal(zombie.startedByWorkbench, true);
    assert.equal(processFlagKind(zombie, seen), 'exited');
  } finally {
    parent.kill('SIGKILL');
  }
  // In a container nothing is looked up: the PID is the host's.
  const nested = await lookUpProcess(entry(process.pid), true);
  assert.equal(nested.inProcTable, null);
  assert.equal(processFlagKind(nested, { ...seen, pidNamespaceNested: true }), 'not-visible');
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
