import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { launchPlanSchema } from '../../core/plan/plan-schema';
import type { AccessFigures } from '../../core/kernel-profile/profile';
import { effectiveBandwidth, formatRate, profileFindings } from '../../core/kernel-profile/profile-findings';
import { forkLauncher } from '../../main/process/launcher';
import { deviceInfos } from '../../main/services/device-service';
import { profilePlan } from '../../main/services/kernel-profile-service';
import { loadSample } from '../../main/services/sample-service';
import { createWorkbench } from '../../main/workbench';
import { readFileSync } from 'node:fs';
import { ROOT } from '../helpers/cli';
import { bareNcuMetrics, buildReference } from '../helpers/profile-reference';

// The profile against bare Nsight Compute on the same launch (issue 28): the sectors per request the workbench
// reports equal ncu's own metrics for the coalesced and the uncoalesced transpose, the uncoalesced line is named,
// and without counters the effective bandwidth of a streaming kernel is within 10% of ncu's DRAM throughput.
const workbench = createWorkbench(forkLauncher);
after(() => workbench.dispose());
const fixturesOut = process.env['GPU_WORKBENCH_FIXTURES_OUT'];
const perRequest = (a: AccessFigures) => (a.sectors / a.requests).toFixed(1);
const device = async () => {
  const devices = await deviceInfos();
  assert.ok(devices.ok, 'no device');
  return devices.devices[0]!;
};
const keep = (name: string, value: unknown) => {
  if (!fixturesOut) return;
  mkdirSync(join(fixturesOut, 'profiles'), { recursive: true });
  writeFileSync(join(fixturesOut, 'profiles', name), `${JSON.stringify(value, null, 2)}\n`);
};

for (const variant of ['broken', 'fixed'] as const) {
  test(`profile of the ${variant} transpose: sectors per request equal to bare ncu's, ${variant === 'broken' ? 'line 7 named as uncoalesced' : 'no line uncoalesced'}`, async () => {
    const sample = await loadSample('uncoalesced-access', variant);
    const started = performance.now();
    const { outcome, profile } = await profilePlan({ plan: sample.plan, planPath: sample.planPath, device: await device() }, workbench);
    const ms = performance.now() - started;
    assert.equal(outcome.status, 'ok', outcome.diagnosis.headline);
    assert.ok(profile?.counters, `no counters: ${JSON.stringify(profile?.noCounters)}`);
    const bare = bareNcuMetrics(buildReference(variant)).metrics;
    const bareLoads = (bare.get('l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum')! / bare.get('l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum')!).toFixed(1);
    const bareStores = (bare.get('l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum')! / bare.get('l1tex__t_requests_pipe_lsu_mem_global_op_st.sum')!).toFixed(1);
    const c = profile.counters;
    console.log(
      `# ${variant}: loads ${perRequest(c.loads)} (bare ncu ${bareLoads}), stores ${perRequest(c.stores)} (bare ncu ${bareStores}); ${(c.durationNs / 1000).toFixed(1)} µs; profiled in ${ms.toFixed(0)} ms`,
    );
    const findings = profileFindings(profile);
    for (const f of findings) console.log(`#   ${f.severity === 'problem' ? '✗' : '·'} ${f.headline}`);
    assert.equal(perRequest(c.loads), bareLoads);
    assert.equal(perRequest(c.stores), bareStores);
    const problems = findings.filter((f) => f.severity === 'problem');
    if (variant === 'broken') {
      assert.equal(bareStores, '32.0');
      assert.deepEqual(
        problems.map((f) => [f.id, f.line]),
        [['uncoalesced', 7]],
      );
      assert.match(problems[0]!.headline, /32\.0 sectors where 4\.0 would do/);
    } else assert.deepEqual(problems, []);
    keep(`uncoalesced-${variant}.json`, profile);
  });
}

test('without counters: the effective bandwidth of a streaming kernel is within 10% of ncu’s DRAM throughput', async () => {
  const n = 1 << 26;
  const plan = launchPlanSchema.parse({
    version: 1,
    kernels: [{ id: 'add', entry: 'vecAdd', source: readFileSync(join(ROOT, 'samples/vector-add/vector_add.cu'), 'utf8'), sourceName: 'vector_add.cu' }],
    buffers: [
      { name: 'a', type: 'f32', count: n, init: { kind: 'constant', value: 1 } },
      { name: 'b', type: 'f32', count: n, init: { kind: 'constant', value: 2 } },
      { name: 'c', type: 'f32', count: n },
    ],
    steps: [
      { op: 'alloc', buffer: 'a' },
      { op: 'alloc', buffer: 'b' },
      { op: 'alloc', buffer: 'c' },
      { op: 'upload', buffer: 'a' },
      { op: 'upload', buffer: 'b' },
      {
        op: 'launch',
        kernel: 'add',
        grid: [n / 256, 1, 1],
        block: [256, 1, 1],
        args: [{ buffer: 'a' }, { buffer: 'b' }, { buffer: 'c' }, { scalar: { type: 'i32', value: n } }],
        warmup: 3,
        repeats: 20,
      },
      { op: 'free', buffer: 'a' },
      { op: 'free', buffer: 'b' },
      { op: 'free', buffer: 'c' },
    ],
  });
  const { outcome, profile } = await profilePlan({ plan, planPath: null, device: await device(), noCounters: true }, workbench);
  assert.equal(outcome.status, 'ok', outcome.diagnosis.headline);
  assert.equal(profile?.counters, null);
  assert.equal(profile?.noCounters?.reason, 'turned-off');
  const ours = effectiveBandwidth(profile!)!;
  const ncu = bareNcuMetrics(buildReference('stream', n)).metrics.get('dram__bytes.sum.per_second')!;
  const off = ours.bytesPerSecond / ncu - 1;
  console.log(
    `# effective ${formatRate(ours.bytesPerSecond)} (${ours.pctOfPeak?.toFixed(1)}% of peak) against ncu's DRAM ${formatRate(ncu)}: ${(100 * off).toFixed(1)}%`,
  );
  assert.ok(Math.abs(off) <= 0.1, `off by ${(100 * off).toFixed(1)}%`);
  keep('stream-no-counters.json', profile);
});
