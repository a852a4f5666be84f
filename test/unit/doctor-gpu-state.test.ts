import assert from 'node:assert/strict';
import { test } from 'node:test';

import { answered, checksById, cudaDevice, facts, notSupported, ok, withDevice } from '../helpers/doctor-facts';

const lost = (code: number) => ({ ok: false as const, code, message: 'nvmlDeviceGetHandleByIndex_v2: GPU is lost' });

test('an exclusive-process GPU: a warning that a second context gets CUDA_ERROR_DEVICE_UNAVAILABLE (46)', () => {
  const c = checksById(withDevice({ computeMode: ok(3) }))['compute-mode']!;
  assert.equal(c.status, 'warn');
  assert.equal(c.area, 'gpu');
  assert.match(c.detail, /EXCLUSIVE_PROCESS: one process at a time/);
  assert.match(c.detail, /CUDA_ERROR_DEVICE_UNAVAILABLE \(46\)/);
  assert.match(c.remedy!, /--no-spare|-c DEFAULT/);
  assert.equal(checksById(withDevice({ computeMode: ok(2) }))['compute-mode']!.status, 'fail');
  assert.equal(checksById(facts())['compute-mode']!.status, 'ok');
});

test("the compute mode comes from the CUDA driver's attribute where NVML cannot say, or without NVML at all", () => {
  const fromCuda = withDevice({ computeMode: notSupported('nvmlDeviceGetComputeMode') }, facts({ cudaDevices: answered([cudaDevice(0, { computeMode: 3 })]) }));
  assert.equal(checksById(fromCuda)['compute-mode']!.status, 'warn');
  const noNvml = facts({ nvml: { status: 'skipped', detail: 'NVML was not found.' }, cudaDevices: answered([cudaDevice(0, { computeMode: 3 })]) });
  const c = checksById(noNvml);
  assert.equal(c['compute-mode']!.status, 'warn');
  assert.match(c['compute-mode']!.remedy!, /-i 0000:00:00\.0/);
  assert.equal(c['gpu-state']!.status, 'not-run');
  assert.doesNotMatch(c['gpu-state']!.detail, /compute mode/);
});

test('persistence off warns only where no display keeps the driver loaded; not supported is not a pass', () => {
  const headless = checksById(withDevice({ persistenceMode: ok(false) }))['persistence-mode']!;
  assert.equal(headless.status, 'warn');
  assert.match(headless.remedy!, /nvidia-persistenced|-pm 1/);
  assert.equal(checksById(withDevice({ persistenceMode: ok(false), displayActive: ok(true) }))['persistence-mode']!.status, 'ok');
  const windows = checksById(withDevice({ persistenceMode: notSupported('nvmlDeviceGetPersistenceMode') }))['persistence-mode']!;
  assert.equal(windows.status, 'not-run');
  assert.match(windows.detail, /not supported on this GPU/);
});

test('MIG: on warns with what CUDA sees; not supported means off; a pending change warns', () => {
  const on = checksById(withDevice({ migMode: ok({ current: 1, pending: 1 }) }))['mig-mode']!;
  assert.equal(on.status, 'warn');
  assert.match(on.detail, /MIG devices, not the GPU.*CUDA_VISIBLE_DEVICES=MIG-<uuid>/);
  assert.equal(checksById(withDevice({ migMode: notSupported('nvmlDeviceGetMigMode') }))['mig-mode']!.status, 'ok');
  const pending = checksById(withDevice({ migMode: ok({ current: 0, pending: 1 }) }))['mig-mode']!;
  assert.equal(pending.status, 'warn');
  assert.match(pending.detail, /turns on at the next GPU reset/);
});

test('a pending remapped row asks for a reset (warn); a failed remapping needs service (fail)', () => {
  const pending = checksById(withDevice({ remappedRows: ok({ correctable: 1, uncorrectable: 2, pending: true, failed: false }) }));
  assert.equal(pending['gpu-reset']!.status, 'warn');
  assert.match(pending['gpu-reset']!.detail, /memory rows wait to be remapped.*next GPU reset/);
  assert.match(pending['gpu-reset']!.remedy!, /nvidia-smi -i 0 -r/);
  assert.equal(pending['memory-repair']!.status, 'ok');
  const failed = checksById(withDevice({ remappedRows: ok({ correctable: 0, uncorrectable: 512, pending: false, failed: true }) }))['memory-repair']!;
  assert.equal(failed.status, 'fail');
  assert.match(failed.detail, /run out of spare memory rows/);
});

test('a GPU before Ampere: retired pages counted, a pending retirement asks for a reset', () => {
  const volta = withDevice({
    remappedRows: notSupported('nvmlDeviceGetRemappedRows'),
    retiredPages: ok({ multipleSingleBit: 2, doubleBit: 1 }),
    retiredPagesPending: ok(true),
  });
  const c = checksById(volta);
  assert.match(c['memory-repair']!.detail, /3 pages retired \(2 for repeated single-bit errors, 1 for double-bit ones\)/);
  assert.equal(c['gpu-reset']!.status, 'warn');
  assert.match(c['gpu-reset']!.detail, /pages wait to be retired/);
  const neither = withDevice({ remappedRows: notSupported('nvmlDeviceGetRemappedRows'), retiredPages: notSupported('nvmlDeviceGetRetiredPages') });
  assert.equal(checksById(neither)['memory-repair']!.status, 'not-run');
});

test('a lost GPU or one that demands a reset fails', () => {
  const gone = checksById(withDevice({ name: lost(15), persistenceMode: lost(15), computeMode: lost(15) }))['gpu-reset']!;
  assert.equal(gone.status, 'fail');
  assert.match(gone.detail, /fallen off the bus/);
  assert.match(gone.remedy!, /dmesg/);
  assert.equal(checksById(withDevice({ eccMode: lost(16) }))['gpu-reset']!.status, 'fail');
});

test('ECC: uncorrectable since the driver loaded fails (214), only in the past warns, none passes, no ECC is not a pass', () => {
  const e = (volatileUncorrected: number, aggregateUncorrected: number) =>
    withDevice({
      eccErrors: {
        volatileCorrected: ok(4),
        volatileUncorrected: ok(volatileUncorrected),
        aggregateCorrected: ok(9),
        aggregateUncorrected: ok(aggregateUncorrected),
      },
    });
  const now = checksById(e(1, 3))['ecc-errors']!;
  assert.equal(now.status, 'fail');
  assert.match(now.detail, /CUDA_ERROR_ECC_UNCORRECTABLE \(214\)/);
  assert.equal(checksById(e(0, 3))['ecc-errors']!.status, 'warn');
  assert.equal(checksById(e(0, 0))['ecc-errors']!.status, 'ok');
  const geforce = checksById(withDevice({ eccMode: notSupported('nvmlDeviceGetEccMode') }))['ecc-errors']!;
  assert.equal(geforce.status, 'not-run');
  assert.match(geforce.detail, /no ECC memory/);
  assert.equal(checksById(withDevice({ eccMode: ok({ current: false, pending: false }) }))['ecc-errors']!.status, 'not-run');
});

test('clock limits: hardware and thermal slowdowns warn, the power cap and idle do not', () => {
  const hw = checksById(withDevice({ clocksEventReasons: ok(0x8) }))['clock-limits']!;
  assert.equal(hw.status, 'warn');
  assert.match(hw.detail, /Hardware slowdown slows the GPU: timings taken now are not representative/);
  assert.match(hw.remedy!, /PERFORMANCE,TEMPERATURE,POWER/);
  assert.equal(checksById(withDevice({ clocksEventReasons: ok(0x20 | 0x4) }))['clock-limits']!.status, 'warn');
  const cap = checksById(withDevice({ clocksEventReasons: ok(0x4) }))['clock-limits']!;
  assert.equal(cap.status, 'ok');
  assert.match(cap.detail, /software power cap\. Normal under full load/);
  assert.match(checksById(withDevice({ clocksEventReasons: ok(0x1) }))['clock-limits']!.detail, /GPU idle/);
  assert.match(checksById(withDevice({ clocksEventReasons: ok(2 ** 40) }))['clock-limits']!.detail, /other reasons \(0x10000000000\)/);
  const old = { ok: false as const, code: -1, message: "this driver's NVML has no nvmlDeviceGetCurrentClocksThrottleReasons" };
  assert.equal(checksById(withDevice({ clocksEventReasons: old }))['clock-limits']!.status, 'not-run');
});

test('several GPUs: one check each, naming the GPU that has the problem', () => {
  const two = facts({}, 2);
  if (two.nvml.status !== 'ok') throw new Error('unreachable');
  two.nvml.value.devices[1] = { ...two.nvml.value.devices[1]!, computeMode: ok(3) };
  const c = checksById(two)['compute-mode']!;
  assert.equal(c.status, 'warn');
  assert.match(c.detail, /^GPU 0 \(NVIDIA H100 80GB HBM3\): compute mode DEFAULT.* GPU 1 \(NVIDIA H100 80GB HBM3\): compute mode EXCLUSIVE_PROCESS/);
  assert.match(c.remedy!, /-i 1 -c DEFAULT/);
});
