import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { executePlan } from '../../main/runner/plan-executor';
import { warmUpModule, warmUpPlan } from '../../main/runner/warm-up';
import { fakeAttributes, pointerArg, recordingAddon } from '../helpers/recording-addon';

// The run a spare runner makes before it says it is ready. What a GPU does with it is the GPU suite's (every run
// there goes to runners that made it); here: that it takes every path a user's run takes, and that its PTX assembles.

test('the warm-up plan takes the paths a run takes: guarded poisoned allocation, upload, launch, guard read, the determinism re-run, download, free', async () => {
  const { addon, calls } = recordingAddon({
    kernels: new Map([
      [
        7,
        (m, [out, n]) => {
          const count = new DataView(n!.buffer, n!.byteOffset, 4).getUint32(0, true);
          m.write(pointerArg(out!), new Uint8Array(new Uint32Array(count).map((_, i) => i).buffer));
        },
      ],
    ]),
  });
  const plan = warmUpPlan(0);
  const { result } = await executePlan(
    addon,
    plan,
    [warmUpModule()],
    { ordinal: 0, name: 'stand-in' },
    async () => ({ fn: { id: 7, attributes: fakeAttributes(48 * 1024) }, loaded: true }),
    'warm-up',
  );
  assert.equal(result.failure, null);
  const methods = calls.map((c) => c.slice(0, c.indexOf('(')));
  for (const m of ['memAllocGuarded', 'memcpyHtoD', 'launch', 'memcpyDtoHRegions', 'memcpyDtoH', 'memFree'])
    assert.ok(methods.includes(m), `${m} in ${methods.join(', ')}`);
  assert.ok(methods.filter((m) => m === 'launch').length >= 2, 'the determinism re-run launches again');
  assert.deepEqual([result.checks.determinism?.status, result.checks.determinism?.differences], ['compared', []]);
});

test('the warm-up kernel is PTX that ptxas assembles for Volta to Hopper (the driver JIT-compiles it for the GPU it runs on)', (t) => {
  const ptxas = '/usr/local/cuda/bin/ptxas';
  if (!existsSync(ptxas)) return t.skip('no CUDA toolkit here');
  const dir = mkdtempSync(join(tmpdir(), 'wb-warm-up-'));
  try {
    const file = join(dir, 'warm-up.ptx');
    writeFileSync(file, warmUpModule().image);
    for (const arch of ['sm_75', 'sm_80', 'sm_90']) {
      const r = spawnSync(ptxas, [`-arch=${arch}`, file, '-o', join(dir, `${arch}.cubin`)], { encoding: 'utf8' });
      assert.equal(r.status, 0, `${arch}: ${r.stderr}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
