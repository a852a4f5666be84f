import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import type { DevicesResult } from '../../core/api/channels';
import { ATTRIBUTES } from '../../core/cuda/device-attributes';
import { smArch } from '../../core/devices';
import { formatBytes, formatCudaVersion, formatMs } from '../../core/format';
import { ROOT } from '../helpers/cli';

// `gpu-workbench devices --json`, captured on an H200 (driver 580.159.04) by the GPU suite.
const h200 = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/h200-devices.json'), 'utf8')) as DevicesResult;

test('the captured H200 carries every attribute by name', () => {
  assert.ok(h200.ok);
  const device = h200.devices[0]!;
  assert.equal(device.name, 'NVIDIA H200');
  assert.equal(smArch(device), 'sm_90');
  assert.deepEqual(Object.keys(device.attributes).sort(), ATTRIBUTES.map((a) => a.name).sort());
  assert.equal(device.attributes['MAX_SHARED_MEMORY_PER_BLOCK_OPTIN'], 232448);
  assert.equal(formatBytes(device.totalMemBytes), '139.8 GiB', 'two decimals, as nvidia-smi and PyTorch give it, not rounded to 140');
});

test('each attribute has one id and its name without the CU_DEVICE_ATTRIBUTE_ prefix', () => {
  assert.equal(ATTRIBUTES.find((a) => a.name === 'WARP_SIZE')?.id, 10);
  assert.ok(ATTRIBUTES.every((a) => !a.name.startsWith('CU_DEVICE_ATTRIBUTE_')));
  assert.equal(new Set(ATTRIBUTES.map((a) => a.id)).size, ATTRIBUTES.length);
});

test('formatting', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(1536), '1.5 KiB');
  assert.equal(formatBytes(48 * 1024), '48 KiB');
  assert.equal(formatBytes(1010 * 1024), '1,010 KiB', 'never "1.01e+3 KiB"');
  assert.equal(formatBytes(100 * 2 ** 30), '100 GiB');
  assert.equal(formatCudaVersion(13000), '13.0');
  assert.equal(formatCudaVersion(12080), '12.8');
  assert.equal(formatMs(0.0088), '8.80 µs');
  assert.equal(formatMs(2.5), '2.500 ms');
});
