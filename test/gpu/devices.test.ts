import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import type { DevicesResult } from '../../core/api/channels';
import { ATTRIBUTES } from '../../core/cuda/device-attributes';
import type { DoctorCheck } from '../../core/discovery';
import { parseJson, runCli } from '../helpers/cli';

/** nvidia-smi's rows for the GPUs CUDA sees here: all of them, or those CUDA_VISIBLE_DEVICES names (half of the suite on each GPU). */
const visible = process.env['CUDA_VISIBLE_DEVICES'] ? ['-i', process.env['CUDA_VISIBLE_DEVICES']] : [];
const smi = (query: string) =>
  execFileSync('nvidia-smi', [...visible, `--query-gpu=${query}`, '--format=csv,noheader,nounits'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.split(',').map((s) => s.trim()));

test('devices --json lists every device with every attribute by name, matching nvidia-smi', async () => {
  const result = await runCli(['devices', '--json']);
  assert.equal(result.code, 0, result.stderr);
  const devices = parseJson<DevicesResult>(result);
  assert.ok(devices.ok);
  if (process.env['GPU_WORKBENCH_FIXTURES_OUT']) writeFileSync(join(process.env['GPU_WORKBENCH_FIXTURES_OUT'], 'devices.json'), result.stdout);
  const rows = smi('name,uuid,pci.bus_id,memory.total,driver_version');
  assert.equal(devices.devices.length, rows.length);
  for (const device of devices.devices) {
    const [name, uuid, bus, memMiB, driver] = rows[device.ordinal]!;
    assert.equal(device.name, name);
    assert.equal(device.uuid, uuid);
    assert.equal(device.pciBusId.toLowerCase().slice(-12), bus!.toLowerCase().slice(-12));
    // nvidia-smi's total and cuDeviceTotalMem differ by the driver's reservation: within 2%.
    assert.ok(Math.abs(device.totalMemBytes / 2 ** 20 - Number(memMiB)) / Number(memMiB) < 0.02, `${device.totalMemBytes} vs ${memMiB} MiB`);
    assert.equal(devices.driverVersion, driver);
    assert.equal(Object.keys(device.attributes).length, ATTRIBUTES.length);
    const known = Object.values(device.attributes).filter((v) => v !== null).length;
    console.log(`# ${device.name}: ${known}/${ATTRIBUTES.length} attributes answered by driver ${driver}`);
    assert.ok(known >= ATTRIBUTES.length - 5, `only ${known} attributes answered`);
    // Facts of Hopper from the CUDA programming guide's compute capability table.
    assert.equal(device.computeCapability.major, 9);
    assert.equal(device.attributes['MAX_THREADS_PER_BLOCK'], 1024);
    assert.equal(device.attributes['WARP_SIZE'], 32);
    assert.equal(device.attributes['MAX_BLOCK_DIM_Z'], 64);
    assert.equal(device.attributes['MAX_GRID_DIM_X'], 2 ** 31 - 1);
    assert.equal(device.attributes['MAX_GRID_DIM_Y'], 65535);
    assert.equal(device.attributes['MAX_SHARED_MEMORY_PER_BLOCK_OPTIN'], 227 * 1024);
    assert.equal(device.attributes['MAX_REGISTERS_PER_MULTIPROCESSOR'], 65536);
    assert.equal(device.attributes['MULTIPROCESSOR_COUNT'], 132); // H100 SXM and H200 alike
    const mem = devices.memory?.find((m) => m.uuid === device.uuid);
    assert.ok(mem, 'NVML memory for the device');
    assert.ok(mem.usedBytes + mem.freeBytes <= mem.totalBytes + 2 ** 20);
  }
});

test('doctor --json finds the driver, NVRTC, NVML and nvcc, and reports their versions', async () => {
  const result = await runCli(['doctor', '--json']);
  const { checks, discovery } = parseJson<{
    checks: DoctorCheck[];
    discovery: { cuda: { version: number; path: string }; nvrtc: { version: number; path: string; supportedArchs?: number[] } };
  }>(result);
  console.log(`# driver ${discovery.cuda.path} (CUDA ${discovery.cuda.version}), nvrtc ${discovery.nvrtc.path} (${discovery.nvrtc.version})`);
  const byId = new Map(checks.map((c) => [c.id, c]));
  for (const id of ['addon', 'driver', 'devices', 'nvrtc', 'nvml', 'nvcc']) assert.equal(byId.get(id)?.status, 'ok', `${id}: ${JSON.stringify(byId.get(id))}`);
  assert.ok(discovery.nvrtc.supportedArchs?.includes(90));
  assert.equal(result.code, 0);
});
