import assert from 'node:assert/strict';
import { test } from 'node:test';

import { normalizeBusId, parseVisibleDevices } from '../../core/doctor/device-order-rules';
import { answered, checksById, cudaDevice, facts, nvmlDevice, ok, withEnv } from '../helpers/doctor-facts';

const gpus = [0, 1, 2, 3].map((index) => ({ index, uuid: `GPU-${index}aaaaaaa-0000-0000-0000-00000000000${index}` }));

test('bus ids compare whatever the domain width and case', () => {
  assert.equal(normalizeBusId('00000000:3B:00.0'), '0000:3b:00.0');
  assert.equal(normalizeBusId('0000:3b:00.0'), '0000:3b:00.0');
  assert.equal(normalizeBusId('not a bus'), null);
});

test('CUDA_VISIBLE_DEVICES: listed order, UUID prefixes, and an invalid entry hides itself and all after it', () => {
  assert.deepEqual(parseVisibleDevices('2,1', gpus), { visible: [2, 1], stoppedAt: null, names: 'gpus' });
  const guide = parseVisibleDevices('0,2,-1,1', gpus); // the CUDA programming guide's example
  assert.deepEqual(guide.visible, [0, 2]);
  assert.equal(guide.stoppedAt?.entry, '-1');
  assert.deepEqual(parseVisibleDevices('GPU-3aaa', gpus).visible, [3]);
  assert.match(parseVisibleDevices('GPU-', gpus).stoppedAt!.why, /start of 4 GPUs' UUIDs/);
  assert.match(parseVisibleDevices('7', gpus).stoppedAt!.why, /no GPU 7: nvidia-smi lists 4, GPU 0 to 3/);
  assert.match(parseVisibleDevices('1,1', gpus).stoppedAt!.why, /a second time/);
  assert.equal(parseVisibleDevices('MIG-1234', gpus).names, 'mig');
});

test('a stray CUDA_VISIBLE_DEVICES naming a GPU that is not there: CUDA sees nothing, and the doctor says so', () => {
  const c = checksById(withEnv({ CUDA_VISIBLE_DEVICES: '1' }))['cuda-visible-devices-entries']!;
  assert.equal(c.status, 'fail');
  assert.match(c.detail, /entry "1" is not usable — there is no GPU 1: nvidia-smi lists one, GPU 0/);
  assert.match(c.detail, /see no GPU at all \(cudaErrorNoDevice, 100\)/);
  const partial = checksById(withEnv({ CUDA_VISIBLE_DEVICES: '1,5,0' }, facts({}, 2)))['cuda-visible-devices-entries']!;
  assert.equal(partial.status, 'warn');
  assert.match(partial.detail, /only GPU 1 \(as CUDA device 0\)/);
  assert.equal(checksById(withEnv({ CUDA_VISIBLE_DEVICES: '0' }))['cuda-visible-devices-entries'], undefined);
  // The setting itself is still reported by the environment rules.
  assert.equal(checksById(withEnv({ CUDA_VISIBLE_DEVICES: '0' }))['cuda-visible-devices']!.status, 'warn');
});

/** Two GPUs where CUDA's fastest-first order puts the second PCI slot first. */
function swapped() {
  const base = facts({}, 2);
  return { ...base, cudaDevices: answered([cudaDevice(0, { pciBusId: '0000:01:00.0' }), cudaDevice(1, { pciBusId: '0000:00:00.0' })]) };
}

test('CUDA ordinals in another order than nvidia-smi without CUDA_DEVICE_ORDER: a warning with the pairs and the fix', () => {
  const c = checksById(swapped())['device-order']!;
  assert.equal(c.status, 'warn');
  assert.match(c.detail, /CUDA device 0 is GPU 1 \(0000:01:00\.0\), CUDA device 1 is GPU 0/);
  assert.match(c.detail, /fastest first \(CUDA_DEVICE_ORDER is unset\)/);
  assert.match(c.remedy!, /CUDA_DEVICE_ORDER=PCI_BUS_ID/);
  const same = checksById(withEnv({ CUDA_DEVICE_ORDER: 'PCI_BUS_ID' }, facts({}, 2)))['device-order']!;
  assert.equal(same.status, 'ok');
  assert.match(same.detail, /the same order as nvidia-smi/);
});

test('an order CUDA_VISIBLE_DEVICES asked for is no surprise', () => {
  const base = withEnv({ CUDA_VISIBLE_DEVICES: '1,0' }, swapped());
  assert.equal(checksById(base)['device-order']!.status, 'ok');
});

test('without NVML, several devices and no CUDA_DEVICE_ORDER still warn; one device with nothing set passes', () => {
  const noNvml = { nvml: { status: 'skipped' as const, detail: 'NVML was not found.' } };
  const many = checksById(facts(noNvml, 2))['device-order']!;
  assert.equal(many.status, 'warn');
  assert.match(many.detail, /NVML's numbering could not be read/);
  assert.equal(checksById(facts(noNvml))['device-order']!.status, 'ok');
  assert.equal(checksById(withEnv({ CUDA_VISIBLE_DEVICES: '0' }, facts(noNvml)))['device-order']!.status, 'not-run');
});

test('a CUDA device NVML does not list (a MIG device) is not judged', () => {
  const f = facts({
    nvml: answered({ driverVersion: ok('580'), cudaDriverVersion: ok(13000), devices: [nvmlDevice(0, { pciBusId: ok('00000000:41:00.0') })] }),
  });
  assert.equal(checksById(f)['device-order']!.status, 'not-run');
});
