import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { makeRedactor } from '../../core/bundle/redact';
import { DOCTOR_AREAS } from '../../core/discovery';
import { evaluateDoctor } from '../../core/doctor/evaluate';
import { parseDoctorFacts, shareableFacts, type DoctorFacts } from '../../core/doctor/facts';
import { summarizeChecks } from '../../core/doctor/report-text';
import { ROOT } from '../helpers/cli';
import { answered, checksById, discovery, facts, gpuProcess, missingLibrary } from '../helpers/doctor-facts';

/** What this machine (no driver, no NVML) gathers. */
const noDriver = (): DoctorFacts =>
  facts({
    discovery: discovery({ cuda: missingLibrary('libcuda.so.1'), nvml: missingLibrary('libnvidia-ml.so.1'), nvrtc: missingLibrary('libnvrtc.so.13') }),
    cudaDevices: { status: 'skipped', detail: 'no NVIDIA driver was found (libcuda.so.1).' },
    nvml: { status: 'skipped', detail: 'NVML (libnvidia-ml.so.1), which ships with the NVIDIA driver, was not found.' },
    processes: { status: 'skipped', detail: 'NVML (libnvidia-ml.so.1), which ships with the NVIDIA driver, was not found.' },
  });

test('no driver: the driver fails with what was searched, and every check that needs the GPU says it could not run', () => {
  const checks = evaluateDoctor(noDriver());
  const by = Object.fromEntries(checks.map((c) => [c.id, c]));
  assert.equal(by['driver']!.status, 'fail');
  assert.deepEqual(by['driver']!.searched, ['libcuda.so.1 (loader path): cannot open shared object file: No such file or directory']);
  for (const id of ['device-order', 'gpu-state', 'gpu-processes', 'nvcc-vs-driver', 'nvcc-arch']) {
    assert.equal(by[id]?.status, 'not-run', id);
    assert.match(by[id]!.detail, /^Not checked: /, id);
  }
  assert.match(by['gpu-state']!.detail, /NVML .* was not found\. So persistence mode, compute mode, MIG, ECC errors/);
  // Silence is a verdict: nothing about the GPU passes when there is no GPU to ask.
  for (const c of checks.filter((c) => c.area === 'gpu' || c.area === 'processes')) assert.notEqual(c.status, 'ok', c.id);
  assert.equal(by['nvml-answer'], undefined, 'a missing NVML is not a hung one');
  assert.equal(summarizeChecks(checks), '1 problem, 2 warnings, 5 not checked, 4 passed');
});

test('every check has an area, the areas come in order, and ids are unique', () => {
  for (const f of [facts(), noDriver(), facts({}, 4)]) {
    const checks = evaluateDoctor(f);
    const areas = checks.map((c) => DOCTOR_AREAS.indexOf(c.area!));
    assert.ok(areas.every((a) => a >= 0));
    assert.deepEqual(
      areas,
      [...areas].sort((a, b) => a - b),
    );
    checksById(f); // throws on a repeated id
  }
});

test('a healthy H100 passes every check', () => {
  const failing = evaluateDoctor(facts()).filter((c) => c.status !== 'ok');
  assert.deepEqual(failing, []);
});

test('facts from a file are validated: the wrong schema, an unknown variable, a huge string are refused with where', () => {
  assert.ok(parseDoctorFacts(JSON.parse(JSON.stringify(facts()))).ok);
  const refused = (value: unknown) => {
    const parsed = parseDoctorFacts(value);
    assert.ok(!parsed.ok);
    return parsed.problems.join('\n');
  };
  assert.match(refused({ ...facts(), schema: 2 }), /^schema: /);
  assert.match(refused({ ...facts(), discovery: { ...discovery(), env: { LD_PRELOAD: '/tmp/x.so' } } }), /discovery\.env/);
  assert.match(refused({ ...facts(), gatheredAt: 'x'.repeat(100_000) }), /gatheredAt/);
  assert.match(refused({ ...facts(), processes: answered({ namespace: 'initial', devices: [], processes: [{ pid: -1 }] }) }), /processes/);
  assert.match(refused('not an object'), /\(top\)/);
});

test('a redacted bundle holds no command line and no GPU UUID from the facts', () => {
  const f = facts();
  if (f.processes.status !== 'ok') throw new Error('unreachable');
  f.processes.value.processes.push(gpuProcess(321, { command: 'python3 train.py --token=s3cr3t' }));
  const redactor = makeRedactor({ userNames: [], hostNames: [], homeDirs: [] });
  const text = JSON.stringify(redactor.json(shareableFacts(f)));
  assert.doesNotMatch(text, /s3cr3t/);
  assert.doesNotMatch(text, /GPU-211e0120/);
  assert.match(text, /"nvmlName":"python3"/);
  assert.match(text, /GPU-0/);
});

const FIXTURES = join(ROOT, 'test/fixtures/env/h100');

test("the hand-written H100 facts parse and pass, but for what they were written before (nvcc's targets: not run)", () => {
  const parsed = parseDoctorFacts(JSON.parse(readFileSync(join(FIXTURES, 'doctor-facts.hand-written.json'), 'utf8')));
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('\n'));
  assert.match(parsed.facts.note ?? '', /HAND-WRITTEN/);
  assert.deepEqual(
    evaluateDoctor(parsed.facts)
      .filter((c) => c.status !== 'ok')
      .map((c) => `${c.id}:${c.status}`),
    ['nvcc-arch:not-run'],
  );
});

const recorded = join(FIXTURES, 'doctor-facts.json');
test(
  'the facts recorded on the H100 (driver 580): the driver, compute mode DEFAULT, and every check that can run there ran',
  {
    skip:
      !existsSync(recorded) && 'test/fixtures/env/h100/doctor-facts.json is not recorded yet: test/gpu/doctor.test.ts writes it to $GPU_WORKBENCH_FIXTURES_OUT',
  },
  () => {
    const parsed = parseDoctorFacts(JSON.parse(readFileSync(recorded, 'utf8')));
    assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('\n'));
    const by = checksById(parsed.facts);
    assert.equal(parsed.facts.nvml.status, 'ok');
    assert.equal(by['driver']!.status, 'ok');
    assert.match(by['driver-version']!.detail, /Driver 580\./);
    assert.match(by['compute-mode']!.detail, /DEFAULT/);
    for (const id of [
      'devices',
      'nvrtc-vs-driver',
      'nvrtc-arch',
      'device-order',
      'gpu-reset',
      'ecc-errors',
      'memory-repair',
      'persistence-mode',
      'mig-mode',
      'clock-limits',
    ])
      assert.ok(by[id] && by[id].status !== 'not-run', `${id}: ${JSON.stringify(by[id])}`);
    assert.deepEqual(
      Object.values(by).filter((c) => c.status === 'fail'),
      [],
    );
  },
);
