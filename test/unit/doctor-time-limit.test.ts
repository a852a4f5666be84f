import assert from 'node:assert/strict';
import { test } from 'node:test';

import { callsStillBlocked, collect } from '../../main/doctor/time-limit';

// No GPU here: a wedged GPU is a call that never returns, which a promise that never settles stands in for. The
// wrapper is what is tested, not the GPU.

test('a call that never answers is reported as not answering within its limit, not waited for', async () => {
  const started = performance.now();
  const never = new Promise<number>(() => {});
  const c = await collect('NVML (a test)', 50, () => never, 'never-1');
  assert.deepEqual(c, { status: 'timed-out', limitMs: 50, detail: 'NVML (a test) did not answer within 0.1 s.' });
  assert.ok(performance.now() - started < 1000);
  assert.ok(callsStillBlocked() >= 1, 'remembered as still blocked');
});

test('a second collector of the same kind waits on the blocked call instead of starting another', async () => {
  let started = 0;
  let finish!: (v: string) => void;
  const work = () => {
    started++;
    // The first call hangs until released; any later one answers at once.
    return started === 1 ? new Promise<string>((resolve) => (finish = resolve)) : Promise.resolve('fresh');
  };
  const blockedBefore = callsStillBlocked();
  assert.equal((await collect('the driver', 20, work, 'shared')).status, 'timed-out');
  assert.equal((await collect('the driver', 20, work, 'shared')).status, 'timed-out');
  assert.equal(started, 1, 'one native call, not two');
  assert.equal(callsStillBlocked(), blockedBefore + 2);
  finish('late');
  await new Promise((r) => setImmediate(r));
  assert.equal(callsStillBlocked(), blockedBefore);
  // Once it has returned, the next collector makes a new call.
  const again = await collect('the driver', 1000, work, 'shared');
  assert.equal(started, 2);
  assert.ok(again.status === 'ok' && again.value === 'fresh');
});

test('an answer in time is kept with how long it took; an error keeps its CUDA/NVML fields', async () => {
  const fine = await collect('x', 1000, async () => 42, 'fine');
  assert.equal(fine.status, 'ok');
  assert.ok(fine.status === 'ok' && fine.value === 42 && fine.ms >= 0);
  const nvml = Object.assign(new Error('nvmlInit_v2 failed: Driver/library version mismatch'), {
    library: 'nvml',
    api: 'nvmlInit_v2',
    code: 18,
    name: 'NVML_ERROR_18',
  });
  const failed = await collect('NVML', 1000, () => Promise.reject(nvml), 'failed');
  assert.equal(failed.status, 'failed');
  assert.ok(failed.status === 'failed');
  assert.equal(failed.detail, 'NVML failed: nvmlInit_v2 failed: Driver/library version mismatch');
  assert.deepEqual(failed.error, { api: 'nvmlInit_v2', code: 18, name: 'NVML_ERROR_18' });
  const thrown = await collect(
    'y',
    1000,
    () => {
      throw new TypeError('bad');
    },
    'thrown',
  );
  assert.equal(thrown.status, 'failed');
  assert.ok(thrown.status === 'failed' && thrown.error === null);
});
