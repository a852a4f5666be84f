import assert from 'node:assert/strict';
import { test } from 'node:test';

import { loadAddon } from '../../main/native/addon';

// Only candidates that do not exist: this process never loads a real driver, so these paths hold on a
// GPU machine too.
const addon = loadAddon().addon!;
const report = addon.loadLibraries({
  cuda: [{ path: '/nonexistent/libcuda.so.1', source: 'setting' }],
  nvrtc: [{ path: '/nonexistent/libnvrtc.so.13', source: 'setting' }],
  nvml: [{ path: '/nonexistent/libnvidia-ml.so.1', source: 'setting' }],
});

test('the addon loads without CUDA and reports each library as not found, with where it looked', () => {
  assert.equal(addon.abiVersion, 1);
  for (const lib of [report.cuda, report.nvrtc, report.nvml]) {
    assert.equal(lib.loaded, false);
    assert.equal(lib.attempts.length, 1);
    assert.match(lib.attempts[0]!.error!, /cannot open shared object file/);
  }
});

test('a library that loads but lacks required symbols is "too old", and the next candidate is tried', () => {
  // libc is a real shared object with none of the driver's symbols.
  const r = addon.loadLibraries({ cuda: [{ path: 'libc.so.6', source: 'test' }], nvrtc: [], nvml: [] });
  assert.equal(r.cuda.loaded, false);
  assert.match(r.cuda.attempts[0]!.error!, /^too old: lacks cuInit/);
  assert.ok(r.cuda.missingRequired.includes('cuMemAlloc_v2'));
});

test('CUDA calls without a driver reject with a structured error, not a crash', async () => {
  for (const call of [
    () => addon.listDevices([1]),
    () => addon.openContext(0),
    () => addon.nvmlSnapshot(),
    () => addon.nvmlSample(true),
    () => addon.nvmlProcessName(1),
    () => addon.nvrtcCompile({ source: '', name: 'x.cu', options: [], nameExpressions: [] }),
  ]) {
    await assert.rejects(call(), (e: Record<string, unknown>) => {
      assert.match(String(e['name']), /^WORKBENCH_(DRIVER|NVML|NVRTC)_NOT_LOADED$/);
      assert.equal(typeof e['api'], 'string');
      assert.equal(e['code'], -1);
      assert.ok(['cuda', 'nvml', 'nvrtc'].includes(String(e['library'])));
      return true;
    });
  }
  assert.throws(
    () => addon.nvmlSamplerStart(10, 1),
    (e: Record<string, unknown>) => e['name'] === 'WORKBENCH_NVML_NOT_LOADED' && e['api'] === 'nvmlInit_v2',
  );
  assert.equal(addon.nvmlSamplerStop(1), false, 'no sampler was started');
  assert.throws(() => addon.nvmlSamplerTake(1), RangeError);
  assert.throws(
    () => addon.nvmlSampleSync(false),
    (e: Record<string, unknown>) => e['name'] === 'WORKBENCH_NVML_NOT_LOADED' && e['library'] === 'nvml' && e['code'] === -1,
  );
  await assert.rejects(
    addon.memAlloc(16),
    (e: Record<string, unknown>) => e['name'] === 'WORKBENCH_INVALID_ARGUMENT' && /No CUDA context is open/.test(String(e['message'])),
  );
  // A read-back lands in a Buffer of the caller's (the runner's: main/runner/run/recorded-device.ts), in either mode.
  for (const inline of [false, true]) {
    addon.setInline(inline);
    await assert.rejects(
      addon.memcpyDtoH(1n, Buffer.alloc(16)),
      (e: Record<string, unknown>) => e['api'] === 'cuMemcpyDtoH_v2' && /No CUDA context is open/.test(String(e['message'])),
    );
  }
  addon.setInline(false);
  // The runner's time origin: a structured rejection the executor turns into launches without GPU placements.
  await assert.rejects(
    addon.markTimeOrigin(),
    (e: Record<string, unknown>) => e['api'] === 'cuEventRecord' && /No CUDA context is open/.test(String(e['message'])),
  );
});

test('bad arguments are refused at the boundary with a TypeError or RangeError', () => {
  const a = addon as unknown as Record<string, (...args: unknown[]) => unknown>;
  assert.throws(() => a['memAlloc']!(-1), RangeError);
  assert.throws(() => a['memAlloc']!(2 ** 60), RangeError);
  assert.throws(() => a['memAlloc']!('16'), TypeError);
  assert.throws(() => a['memFree']!(16), TypeError);
  assert.throws(() => a['openContext']!(1.5), RangeError);
  assert.throws(() => a['loadModule']!(Buffer.alloc(0)), RangeError);
  assert.throws(() => a['loadModule']!('not bytes'), TypeError);
  assert.throws(() => a['launch']!({ functionId: 1, grid: [1, 1], block: [1, 1, 1], sharedBytes: 0, args: [], warmup: 0, repeats: 1 }), TypeError);
  assert.throws(
    () => a['launch']!({ functionId: 1, grid: [1, 1, 1], block: [1, 1, 1], sharedBytes: 0, args: [Buffer.alloc(0)], warmup: 0, repeats: 1 }),
    RangeError,
  );
  assert.throws(() => a['loadLibraries']!({ cuda: 'libcuda.so.1' }), TypeError);
  assert.throws(() => a['nvmlSample']!('yes'), TypeError);
  assert.throws(() => a['nvmlSampleSync']!(), TypeError);
  assert.throws(() => a['nvmlProcessName']!(0), RangeError);
  assert.throws(() => a['nvmlProcessName']!(2 ** 32), RangeError);
  assert.throws(() => a['nvmlSamplerStart']!(0, 1), RangeError);
  assert.throws(() => a['nvmlSamplerStart']!(10, -1), RangeError);
  assert.throws(() => a['nvmlSamplerStart']!('10', 1), TypeError);
  assert.throws(() => a['nvmlSamplerTake']!(0), RangeError);
});
