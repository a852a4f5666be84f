import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { parseDoctorFacts, type DoctorFacts } from '../../core/doctor/facts';
import { parseNvccArchList } from '../../core/doctor/nvcc-targets';
import { ROOT } from '../helpers/cli';
import { answered, checksById, CUDA_13_0_ARCHS, cudaDevice, discovery, facts } from '../helpers/doctor-facts';

// nvcc's own target list against the GPU, judged from facts: the lists are what CUDA 13.0.88's nvcc printed
// (recorded here, test/fixtures/env/nvcc-13.0), the GPU the H100's recorded doctor facts (sm_90).
const NVCC = join(ROOT, 'test/fixtures/env/nvcc-13.0');
const recordedList = (name: string) => readFileSync(join(NVCC, name), 'utf8');
const h100 = (): DoctorFacts => {
  const parsed = parseDoctorFacts(JSON.parse(readFileSync(join(ROOT, 'test/fixtures/env/h100/doctor-facts.json'), 'utf8')));
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('\n'));
  return parsed.facts;
};
const recordedTargets = () => ({
  path: '/usr/local/cuda/bin/nvcc',
  sass: parseNvccArchList(recordedList('list-gpu-code.txt'), 'sm').archs,
  ptx: parseNvccArchList(recordedList('list-gpu-arch.txt'), 'compute').archs,
});

test("nvcc's lists as CUDA 13.0 prints them: every architecture once, in its order; a line that names none is set aside", () => {
  assert.deepEqual(parseNvccArchList(recordedList('list-gpu-code.txt'), 'sm'), { archs: CUDA_13_0_ARCHS, unreadable: [] });
  assert.deepEqual(parseNvccArchList(recordedList('list-gpu-arch.txt'), 'compute'), { archs: CUDA_13_0_ARCHS, unreadable: [] });
  // The other list's names, and an nvcc that does not know the option, are not targets.
  assert.deepEqual(parseNvccArchList(recordedList('list-gpu-arch.txt'), 'sm').archs, []);
  const old = parseNvccArchList(recordedList('unknown-option.txt'), 'sm');
  assert.deepEqual(old.archs, []);
  assert.match(old.unreadable[0]!, /^nvcc fatal\s+: Unknown option/);
  // Family and specific variants (sm_90a, sm_100f) are their architecture; junk stays junk.
  assert.deepEqual(parseNvccArchList('sm_90\nsm_90a\r\nsm_100f\n\nsm_\nsm_9\nrm -rf /\n', 'sm').archs, [90, 100]);
});

test('the H100 (sm_90) and the nvcc CUDA 13.0 lists: passes, and says which nvcc builds for which device', () => {
  const c = checksById({ ...h100(), nvccTargets: answered(recordedTargets()) })['nvcc-arch']!;
  assert.equal(c.status, 'ok', c.detail);
  assert.equal(c.area, 'compilers');
  assert.equal(c.detail, 'nvcc (CUDA 13.0) at /usr/local/cuda/bin/nvcc builds machine code for sm_90 (CUDA device 0, NVIDIA H100 80GB HBM3).');
});

test('facts gathered before the doctor asked nvcc still load, and the check is not run, never passed', () => {
  // The hand-written H100 facts are such a file; so is the recorded one without the field (as first committed).
  const handWritten = parseDoctorFacts(JSON.parse(readFileSync(join(ROOT, 'test/fixtures/env/h100/doctor-facts.hand-written.json'), 'utf8')));
  assert.ok(handWritten.ok);
  const { nvccTargets: _dropped, ...recorded } = h100();
  const reloaded = parseDoctorFacts(JSON.parse(JSON.stringify(recorded)));
  assert.ok(reloaded.ok, reloaded.ok ? '' : reloaded.problems.join('\n'));
  for (const old of [handWritten.facts, reloaded.facts]) {
    assert.equal(old.nvccTargets, undefined);
    const c = checksById(old)['nvcc-arch']!;
    assert.equal(c.status, 'not-run');
    assert.match(c.detail, /^Not checked: these facts were gathered before the doctor asked nvcc for its targets/);
    assert.match(c.remedy!, /gpu-workbench doctor/);
  }
});

test("the H100 facts as recorded: once recorded with nvcc's targets (test/gpu/doctor.test.ts), sm_90 is among them", (t) => {
  const recorded = h100();
  if (!recorded.nvccTargets) return t.skip('test/fixtures/env/h100/doctor-facts.json was recorded before the doctor asked nvcc');
  assert.equal(checksById(recorded)['nvcc-arch']!.status, 'ok', checksById(recorded)['nvcc-arch']!.detail);
});

test("a GPU older than nvcc's oldest target (a V100 under CUDA 13.0): a failure naming the refused -arch, 209, and the fix", () => {
  const volta = {
    ...h100(),
    nvccTargets: answered(recordedTargets()),
    cudaDevices: answered([cudaDevice(0, { name: 'Tesla V100-SXM2-32GB', computeCapability: { major: 7, minor: 0 } })]),
  };
  const c = checksById(volta)['nvcc-arch']!;
  assert.equal(c.status, 'fail');
  assert.match(c.detail, /sm_70 \(CUDA device 0, Tesla V100-SXM2-32GB\) is older than its oldest target, sm_75/);
  assert.match(c.detail, /-arch=sm_70 fails \("nvcc fatal : Unsupported gpu architecture"\)/);
  assert.match(c.detail, /no kernel image is available .*209/);
  assert.match(c.remedy!, /`nvcc --list-gpu-code` lists sm_70.*GPU_WORKBENCH_NVCC/);
  // What nvcc said when asked for sm_70 (recorded): the finding's words are its words.
  assert.match(recordedList('unsupported-sm_70.txt'), /nvcc fatal\s+: Unsupported gpu architecture 'sm_70'/);
});

test('a GPU newer than every target: a failure that says PTX for the newest virtual architecture is JIT-compiled; one in a gap is named too', () => {
  const upTo90 = CUDA_13_0_ARCHS.filter((a) => a <= 90);
  const newer = facts({
    nvccTargets: answered({ path: '/opt/cuda/bin/nvcc', sass: upTo90, ptx: upTo90 }),
    cudaDevices: answered([cudaDevice(0, { name: 'NVIDIA RTX PRO 6000', computeCapability: { major: 12, minor: 0 } })]),
  });
  const c = checksById(newer)['nvcc-arch']!;
  assert.equal(c.status, 'fail');
  assert.match(c.detail, /sm_120 .*is newer than its newest target, sm_90 \(PTX built for compute_90, -arch=compute_90, is compiled for it by the driver/);
  const gap = facts({ cudaDevices: answered([cudaDevice(0, { name: 'Jetson AGX Xavier', computeCapability: { major: 7, minor: 2 } }), cudaDevice(1)]) });
  const g = checksById({ ...gap, nvccTargets: answered({ path: '/x/nvcc', sass: [70, 75, 80, 90], ptx: [70] }) })['nvcc-arch']!;
  assert.equal(g.status, 'fail');
  assert.match(g.detail, /sm_72 \(CUDA device 0, Jetson AGX Xavier\) is not among its targets/);
  assert.doesNotMatch(g.detail, /sm_90 \(CUDA device 1/, 'the device it can build for is not named as a problem');
});

test('nvcc that cannot be asked — missing, too old to know the option, hung, or without a device to compare — is not run, never passed', () => {
  const cases: [DoctorFacts, RegExp][] = [
    [facts({ discovery: discovery({ nvcc: { found: false, path: null, version: null, searched: ['/usr/local/cuda/bin/nvcc'] } }) }), /nvcc was not found/],
    [
      facts({
        nvccTargets: {
          status: 'failed',
          ms: 12,
          detail: "nvcc (--list-gpu-code and --list-gpu-arch) failed: `nvcc --list-gpu-code` exited with 1: nvcc fatal   : Unknown option '--list-gpu-code'",
          error: null,
        },
      }),
      /Unknown option '--list-gpu-code'/,
    ],
    [
      facts({ nvccTargets: { status: 'timed-out', limitMs: 5000, detail: 'nvcc (--list-gpu-code and --list-gpu-arch) did not answer within 5 s.' } }),
      /did not answer within 5 s/,
    ],
    [facts({ nvccTargets: { status: 'skipped', detail: 'nvcc was not found.' } }), /nvcc was not found/],
    [facts({ cudaDevices: { status: 'skipped', detail: 'no NVIDIA driver was found (libcuda.so.1).' } }), /no NVIDIA driver was found/],
    [facts({ cudaDevices: answered([]) }), /the driver lists no device/],
    [facts({ nvccTargets: answered({ path: '/x/nvcc', sass: [], ptx: [] }) }), /listed no architecture/],
  ];
  for (const [f, why] of cases) {
    const c = checksById(f)['nvcc-arch']!;
    assert.equal(c.status, 'not-run', c.detail);
    assert.match(c.detail, why);
  }
});

test('the new fact is data from outside like the rest: bounded lists of whole numbers, or the facts are refused', () => {
  const refused = (v: unknown) => {
    const parsed = parseDoctorFacts(JSON.parse(JSON.stringify(v)));
    return parsed.ok ? null : parsed.problems.join('\n');
  };
  assert.equal(refused(facts()), null);
  assert.match(refused({ ...facts(), nvccTargets: answered({ path: '/x', sass: [-1], ptx: [] }) })!, /nvccTargets/);
  assert.match(refused({ ...facts(), nvccTargets: answered({ path: '/x', sass: Array(300).fill(90), ptx: [] }) })!, /nvccTargets/);
});
