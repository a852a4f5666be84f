import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { findNvcc } from '../../main/compile/nvcc';
import { parseJson, ROOT, runCli, SAMPLES } from '../helpers/cli';

// Issue 26: the CLI makes the check the launch panel and Run make — the whole plan, every launch and every buffer
// against the device's memory (and the host's) — through `validate --plan` / `--sample`, against a shipped profile.
const h100 = join(ROOT, 'profiles/nvidia-h100.json');
const hasCompiler = findNvcc().then((n) => n.found);

test('validate --sample: the 256 GiB buffer refused, named, with the figures; the fixed variant passes', async () => {
  const broken = await runCli(['validate', '--sample', 'allocation-too-large', '--profile', h100]);
  assert.equal(broken.code, 1, broken.stdout + broken.stderr);
  assert.match(
    broken.stdout,
    /Buffer `x` asks for 256 GiB; the NVIDIA H100 80GB HBM3 has 79\.18 GiB in all: 3\.2× too large\. → CUDA_ERROR_OUT_OF_MEMORY \(2\)/,
  );
  assert.match(broken.stdout, /fix: Make `x` smaller/);
  assert.match(broken.stdout, /✗ The plan would fail on NVIDIA H100 80GB HBM3\.$/m);

  const fixed = await runCli(['validate', '--sample', 'allocation-too-large', '--fixed', '--profile', h100]);
  assert.equal(fixed.code, 0, fixed.stdout + fixed.stderr);
  assert.match(fixed.stdout, /Memory: every buffer fits\.\n✓ The plan would run on NVIDIA H100 80GB HBM3\./);

  const json = parseJson<{ ok: boolean; device: string; memory: { rule: string; buffer: string; value: number; limit: number }[] }>(
    await runCli(['validate', '--sample', 'allocation-too-large', '--profile', h100, '--json']),
  );
  assert.equal(json.ok, false);
  assert.deepEqual(
    json.memory.map((m) => [m.rule, m.buffer, m.value, m.limit]),
    [['buffer-larger-than-device', 'x', 2 ** 38, 85017493504]],
  );
});

test('validate --plan: every launch of the plan, with the kernel compiled where a compiler is here', async () => {
  const r = await runCli(['validate', '--plan', join(SAMPLES, 'block-too-large/plan.json'), '--profile', h100]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /Step 6: launch addMatrices<<<\(8,16\), \(64,32\)>>>.* ✗\n {2}✗ \(64,32\) is 2048 threads per block; this device allows 1024/);
  if (await hasCompiler) assert.doesNotMatch(r.stdout, /device’s limits only/);
  const ok = await runCli(['validate', '--plan', join(SAMPLES, 'vector-add/plan.json'), '--profile', h100]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
});

test('validate --plan: a plan that is not valid is refused with its problems (64); the modes are not mixed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wb-validate-plan-'));
  const plan = JSON.parse(readFileSync(join(SAMPLES, 'vector-add/plan.json'), 'utf8')) as { buffers: { count: number }[]; kernels: { sourceFile?: string }[] };
  plan.buffers[0]!.count = 0;
  writeFileSync(join(dir, 'vector_add.cu'), readFileSync(join(SAMPLES, 'vector-add/vector_add.cu')));
  writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan));
  const r = await runCli(['validate', '--plan', join(dir, 'plan.json'), '--profile', h100]);
  assert.equal(r.code, 64, r.stdout + r.stderr);
  assert.match(r.stderr, /is not valid:\nbuffers\.0\.count: must be at least 1 element/);
  const mixed = await runCli(['validate', join(SAMPLES, 'vector-add/vector_add.cu'), '--plan', join(SAMPLES, 'vector-add/plan.json'), '--profile', h100]);
  assert.equal(mixed.code, 64);
  assert.match(mixed.stderr, /one of them/);
  const none = await runCli(['validate', '--profile', h100]);
  assert.equal(none.code, 64);
  assert.match(none.stderr, /Give a \.cu file/);
});

test('validate <file.cu> --kernel: one launch, as before', async (t) => {
  if (!(await hasCompiler)) return t.skip('no CUDA compiler here');
  const r = await runCli(['validate', join(SAMPLES, 'vector-add/vector_add.cu'), '--kernel', 'vecAdd', '--grid', '4', '--block', '64,32', '--profile', h100]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /2048 threads per block; this device allows 1024/);
  const noKernel = await runCli(['validate', join(SAMPLES, 'vector-add/vector_add.cu'), '--profile', h100]);
  assert.equal(noKernel.code, 64);
  assert.match(noKernel.stderr, /--kernel NAME/);
});
