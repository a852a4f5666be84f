import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { profileFindings } from '../../core/kernel-profile/profile-findings';
import { deviceInfos } from '../../main/services/device-service';
import { profileProgram } from '../../main/services/program-profile-service';
import { buildReference } from '../helpers/profile-reference';

// `gpu-workbench profile -- <command>` (issue 28): a plain program's launch profiled with its lines (the naive
// transpose built with -lineinfo: line 7's stores at 32 sectors per request), and a PyTorch program's first kernels.
const fixturesOut = process.env['GPU_WORKBENCH_FIXTURES_OUT'];
const keep = (name: string, value: unknown) => {
  if (!fixturesOut) return;
  mkdirSync(join(fixturesOut, 'profiles'), { recursive: true });
  writeFileSync(join(fixturesOut, 'profiles', name), `${JSON.stringify(value, null, 2)}\n`);
};
const device = async () => {
  const d = await deviceInfos();
  return d.ok ? (d.devices[0] ?? null) : null;
};

test('profile -- a plain program: its launch, its own lines, line 7 uncoalesced as in the plan’s profile', async () => {
  const ref = buildReference('broken');
  const started = performance.now();
  const profile = await profileProgram({ command: [ref.binary, ...ref.args], cwd: tmpdir(), count: 1, device: await device() });
  console.log(`# ${profile.kernels.length} launch(es) in ${(performance.now() - started).toFixed(0)} ms; exit ${profile.exit.code}`);
  assert.equal(profile.noCounters, null, JSON.stringify(profile.noCounters));
  assert.equal(profile.kernels.length, 1);
  const [k] = profile.kernels;
  assert.match(k!.kernel.entry, /^transpose/);
  assert.deepEqual(k!.kernel.grid, [64, 256, 1]);
  const problems = profileFindings(k!).filter((f) => f.severity === 'problem');
  for (const f of profileFindings(k!)) console.log(`#   ${f.severity === 'problem' ? '✗' : '·'} ${f.headline}`);
  assert.deepEqual(
    problems.map((f) => [f.id, f.line]),
    [['uncoalesced', 7]],
  );
  keep('program-transpose.json', profile);
});

test('profile -- python3 (PyTorch): its first kernels, each named, with counters', async () => {
  const code = "import torch; x = torch.ones(1 << 22, device='cuda'); y = x * 2 + 1; torch.cuda.synchronize(); print(float(y[0]))";
  const started = performance.now();
  const profile = await profileProgram({ command: ['python3', '-c', code], cwd: tmpdir(), count: 2, device: await device(), timeoutMs: 240_000 });
  console.log(`# ${profile.kernels.length} launch(es) in ${(performance.now() - started).toFixed(0)} ms; exit ${profile.exit.code}`);
  for (const k of profile.kernels)
    console.log(`#   ${k.kernel.entry.slice(0, 100)}: ${(k.counters!.durationNs / 1000).toFixed(1)} µs, memory ${k.counters!.memoryPct.toFixed(1)}%`);
  assert.equal(profile.exit.code, 0, profile.output.slice(-2000));
  assert.equal(profile.kernels.length, 2);
  assert.ok(profile.kernels.every((k) => k.counters && k.counters.durationNs > 0 && k.kernel.entry.length > 0));
  keep('program-pytorch.json', profile);
});
