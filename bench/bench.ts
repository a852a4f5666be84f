import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { planFromArgs } from '../core/plan/arg-syntax';
import { launchPlanSchema, type LaunchPlan } from '../core/plan/plan-schema';
import type { CompiledModule } from '../core/runner/protocol';
import { CompileService } from '../main/compile/compile-service';
import { projectRoot } from '../main/paths';
import { forkLauncher } from '../main/process/launcher';
import { RunnerPool } from '../main/runner/runner-pool';
import { listDevices } from '../main/services/device-service';

/**
 * `npm run bench` (GPU machine): the workbench's runner against a raw driver-API program doing the
 * same work, in the same run. Measures what the process model costs: a cold runner, a warm re-run of
 * an unchanged kernel, and recovery after a sticky fault.
 */
const N = 1 << 16;
const REPEATS = 50;
const root = projectRoot();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const time = async <T>(f: () => Promise<T>) => {
  const s = performance.now();
  const value = await f();
  return { ms: performance.now() - s, value };
};

async function main() {
  const devices = await listDevices();
  if (!devices.ok) {
    console.error(`✗ ${devices.problem.title}: the benchmark needs a GPU. ${devices.problem.remedy}`);
    process.exit(2);
  }
  const device = devices.devices[0]!;
  const arch = `sm_${device.computeCapability.major}${device.computeCapability.minor}`;
  const source = readFileSync(join(root, 'samples/vector-add/vector_add.cu'), 'utf8');
  const work = mkdtempSync(join(tmpdir(), 'gpu-workbench-bench-'));

  const compiler = new CompileService(forkLauncher);
  const compiled = await compiler.compile({ source, sourceName: 'vector_add.cu', options: { arch }, backend: 'auto' });
  await compiler.dispose();
  if (!compiled.ok || !compiled.image) throw new Error(compiled.log);
  const symbol = compiled.kernels.find((k) => k.name === 'vecAdd')!.symbol!;
  const cubin = join(work, 'vector_add.cubin');
  writeFileSync(cubin, compiled.image);
  const modules: CompiledModule[] = [{ kernel: 'main', symbol, image: compiled.image }];

  const ref = join(work, 'launch_ref');
  execFileSync('nvcc', ['-O2', '-o', ref, join(root, 'bench/raw/launch_ref.cu'), '-lcuda'], { stdio: 'inherit' });
  const runRef = (repeats: number) => {
    const s = performance.now();
    const r = spawnSync(ref, [cubin, symbol, String(N), String(repeats)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`reference failed: ${r.stderr}`);
    return { wallMs: performance.now() - s, ...(JSON.parse(r.stdout) as { contextMs: number; moduleMs: number; firstRunMs: number; warmMedianMs: number }) };
  };
  const refCold = [0, 1, 2].map(() => runRef(0));
  const refWarm = runRef(REPEATS);

  const plan: LaunchPlan = launchPlanSchema.parse(
    planFromArgs({
      source,
      sourceName: 'vector_add.cu',
      kernel: 'vecAdd',
      grid: [Math.ceil(N / 256), 1, 1],
      block: [256, 1, 1],
      sharedBytes: 0,
      args: [
        { kind: 'buffer', buffer: { name: 'a', type: 'f32', count: N, init: { kind: 'iota', start: 0, step: 1 } } },
        { kind: 'buffer', buffer: { name: 'b', type: 'f32', count: N, init: { kind: 'iota', start: 0, step: 2 } } },
        { kind: 'buffer', buffer: { name: 'c', type: 'f32', count: N, init: { kind: 'zeros' } } },
        { kind: 'scalar', name: 'n', type: 'i32', value: N },
      ],
    }),
  );
  const check = (r: { ok: boolean; buffers: { name: string; tail: number[] }[] }) => {
    if (!r.ok || r.buffers.find((b) => b.name === 'c')!.tail.at(-1) !== 3 * (N - 1)) throw new Error('wrong result from the workbench');
  };

  const cold: number[] = [];
  for (let i = 0; i < 3; i++) {
    const pool = new RunnerPool({ launcher: forkLauncher, warmSpare: false });
    const { ms, value } = await time(() => pool.run(plan, modules, 30_000));
    check(value);
    cold.push(ms);
    await pool.dispose();
  }

  const pool = new RunnerPool({ launcher: forkLauncher, warmSpare: true });
  check(await pool.run(plan, modules, 30_000));
  const warm: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    const { ms, value } = await time(() => pool.run(plan, modules, 30_000));
    check(value);
    warm.push(ms);
  }

  const faultSource = readFileSync(join(root, 'samples/null-pointer/null_pointer.cu'), 'utf8');
  const faultCompiler = new CompileService(forkLauncher);
  const faulty = await faultCompiler.compile({ source: faultSource, sourceName: 'null_pointer.cu', options: { arch }, backend: 'auto' });
  await faultCompiler.dispose();
  const faultPlan: LaunchPlan = launchPlanSchema.parse(
    planFromArgs({
      source: faultSource,
      sourceName: 'null_pointer.cu',
      kernel: 'writeThrough',
      grid: [1, 1, 1],
      block: [32, 1, 1],
      sharedBytes: 0,
      args: [
        { kind: 'scalar', name: 'out', type: 'u64', value: '0' },
        { kind: 'scalar', name: 'n', type: 'i32', value: 32 },
      ],
    }),
  );
  const recovery: number[] = [];
  const faultCodes: string[] = [];
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 1500)); // let the spare finish starting, as it would between user actions
    const fault = await pool.run(
      faultPlan,
      [{ kernel: 'main', symbol: faulty.kernels.find((k) => k.name === 'writeThrough')!.symbol!, image: faulty.image! }],
      30_000,
    );
    if (!fault.failure?.sticky) throw new Error(`expected a sticky fault, got ${JSON.stringify(fault.failure ?? 'success')}`);
    faultCodes.push(fault.failure.error.name);
    const { ms, value } = await time(() => pool.run(plan, modules, 30_000));
    check(value);
    recovery.push(ms);
  }
  await pool.dispose();

  const refColdMs = median(refCold.map((r) => r.wallMs));
  const rows = [
    ['fresh process to first result', median(cold), refColdMs],
    ['re-run of an unchanged kernel (warm)', median(warm), refWarm.warmMedianMs],
    ['sticky fault (700) to next result', median(recovery), refColdMs],
  ] as const;
  const result = {
    device: device.name,
    n: N,
    repeats: REPEATS,
    rows: rows.map(([name, wb, raw]) => ({ name, workbenchMs: wb, rawMs: raw, ratio: wb / raw, overMs: wb - raw })),
    reference: { cold: refCold, warm: refWarm },
    samples: { cold, warm, recovery },
  };
  if (process.env['OUT'] && existsSync(process.env['OUT'])) writeFileSync(join(process.env['OUT'], 'bench.json'), JSON.stringify(result, null, 2));
  console.log(`\n${device.name}, vecAdd n=${N} (alloc, upload 2 buffers, launch, sync, read back, free)`);
  console.log('| measure | workbench | raw CUDA program | difference |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const r of result.rows)
    console.log(
      `| ${r.name} | ${r.workbenchMs.toFixed(2)} ms | ${r.rawMs.toFixed(2)} ms | ${r.overMs >= 0 ? '+' : ''}${r.overMs.toFixed(2)} ms (${r.ratio.toFixed(2)}×) |`,
    );
  console.log(`(the fault row's raw figure is a fresh process: what recovery costs without a warm spare; faults seen: ${[...new Set(faultCodes)].join(', ')})`);
}

main().catch((error) => {
  console.error(`✗ ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
