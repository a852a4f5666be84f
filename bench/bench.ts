import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { mulberry32 } from '../core/plan/buffer-data';
import { planFromArgs } from '../core/plan/arg-syntax';
import { deviceLimits, deviceProfileSchema } from '../core/validate/device-limits';
import { occupancy, type KernelLimits } from '../core/validate/occupancy';
import { validateLaunch } from '../core/validate/validate-launch';
import { launchPlanSchema, type LaunchPlan } from '../core/plan/plan-schema';
import type { CompiledModule } from '../core/runner/protocol';
import type { RunLogEvent } from '../core/runner/event-log';
import { compileOptionsSchema, nvrtcArguments } from '../core/compile/compile-options';
import { CompileCache } from '../main/compile/compile-cache';
import { CompileService, type CompiledResult } from '../main/compile/compile-service';
import { requireAddon } from '../main/native/addon';
import { discoverLibraries } from '../main/services/discovery-service';
import { projectRoot } from '../main/paths';
import { forkLauncher } from '../main/process/launcher';
import { nullPointerPlan } from '../test/helpers/plans';
import { RunnerPool } from '../main/runner/runner-pool';
import { smArch } from '../core/devices';
import { listDevices } from '../main/services/device-service';
import { createWorkbench } from '../main/workbench';
import { LineReference } from './line-reference';

/**
 * `npm run bench` (GPU machine): the workbench's runner against a raw driver-API program doing the
 * same work, in the same run. Measures what the process model costs: a cold runner, a warm re-run of
 * an unchanged kernel, and recovery after a sticky fault.
 */
const N = 1 << 16;
const REPEATS = 50;
/** `node dist/bench/bench.js --rerun`: only the re-run rows (a fresh runner, warm, whole path), about 20 s. */
const RERUN_ONLY = process.argv.includes('--rerun');
const EDIT_BLOCKS = 3;
const EDITS_PER_BLOCK = 10;
const root = projectRoot();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const time = async <T>(f: () => Promise<T>) => {
  const s = performance.now();
  const value = await f();
  return { ms: performance.now() - s, value };
};

/** The launch validator: how long one configuration takes to check (target: under 50 µs). Needs no GPU. */
function benchValidator(): { perValidationUs: number; perOccupancyUs: number; count: number } {
  const profile = deviceProfileSchema.parse(JSON.parse(readFileSync(join(root, 'profiles/nvidia-h200.json'), 'utf8')));
  const limits = deviceLimits(profile.device);
  const kernel: KernelLimits = { numRegs: 40, sharedSizeBytes: 4096, localSizeBytes: 0, maxThreadsPerBlock: 1024, maxDynamicSharedSizeBytes: 45056 };
  const rand = mulberry32(42);
  const count = 200_000;
  const configs = Array.from({ length: 1000 }, () => ({
    grid: [1 + Math.floor(rand() * 100_000), 1 + Math.floor(rand() * 4), 1] as const,
    block: [32 * (1 + Math.floor(rand() * 40)), 1 + Math.floor(rand() * 2), 1] as const,
    sharedBytes: Math.floor(rand() * 60_000),
  }));
  for (let i = 0; i < 20_000; i++) validateLaunch(limits, kernel, configs[i % 1000]!);
  let t = performance.now();
  for (let i = 0; i < count; i++) validateLaunch(limits, kernel, configs[i % 1000]!);
  const perValidationUs = ((performance.now() - t) * 1000) / count;
  t = performance.now();
  for (let i = 0; i < count; i++) occupancy(limits, kernel, configs[i % 1000]!.block[0], configs[i % 1000]!.sharedBytes);
  return { perValidationUs, perOccupancyUs: ((performance.now() - t) * 1000) / count, count };
}

async function main() {
  // The renderer's row needs a browser, not a GPU: its own mode, loaded only when asked for (the GPU
  // machine has no node_modules, so no Playwright).
  if (process.argv.includes('--renderer')) return (await import('./renderer-bench')).benchRenderer();
  const v = benchValidator();
  console.log(
    `Launch validator (H200 profile, ${v.count} random configurations): ${v.perValidationUs.toFixed(2)} µs per validation (target < 50 µs), ${v.perOccupancyUs.toFixed(2)} µs per occupancy computation`,
  );
  const devices = await listDevices();
  if (!devices.ok) {
    console.error(`✗ ${devices.problem.title}: the rest of the benchmark needs a GPU. ${devices.problem.remedy}`);
    process.exit(2);
  }
  const device = devices.devices[0]!;
  const arch = smArch(device);
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
  execFileSync('nvcc', ['-O2', '-o', ref, join(root, 'bench/raw/launch_ref.cu'), '-lcuda', '-lnvrtc'], { stdio: 'inherit' });
  const runRef = (repeats: number) => {
    const s = performance.now();
    const r = spawnSync(ref, [cubin, symbol, String(N), String(repeats)], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`reference failed: ${r.stderr}`);
    return { wallMs: performance.now() - s, ...(JSON.parse(r.stdout) as { contextMs: number; moduleMs: number; firstRunMs: number; warmMedianMs: number }) };
  };
  const refCold = [0, 1, 2].map(() => runRef(0));
  const srcFile = join(work, 'vector_add.cu');
  writeFileSync(srcFile, source);
  const rawArgs = [cubin, symbol, srcFile, 'vecAdd', String(N), ...nvrtcArguments(compileOptionsSchema.parse({ arch }))];
  const raw = await LineReference.start(ref, rawArgs);

  // The same work as the raw program: upload a and b, read back only c.
  const fromArgs = planFromArgs({
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
  });
  // The raw program runs the launch once: the determinism check (a second run compared bit for bit) is
  // measured on its own row.
  const plan: LaunchPlan = launchPlanSchema.parse({
    ...fromArgs,
    steps: fromArgs.steps.filter((s) => !((s.op === 'upload' && s.buffer === 'c') || (s.op === 'download' && s.buffer !== 'c'))),
    checks: { determinismRuns: 0 },
  });
  const checkedPlan: LaunchPlan = { ...plan, checks: { ...plan.checks, determinismRuns: 1 } };
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
  // Each workbench measurement is paired with one of the raw program's, taken just before it.
  const warm: number[] = [];
  const rawWarm: number[] = [];
  const inRunner: number[] = [];
  const stepsSum: number[] = [];
  const stepWall = new Map<string, number[]>();
  const driverCalls: Map<string, number>[] = [];
  const checked: number[] = [];
  const checkedInRunner: number[] = [];
  const unchecked: number[] = [];
  for (let i = 0; i < REPEATS; i++) {
    rawWarm.push(await raw.measure('run'));
    const { ms, value } = await time(() => pool.run(plan, modules, 30_000));
    check(value);
    warm.push(ms);
    // The same run with the determinism check, paired with this one: its extra cost is the difference.
    const withCheck = await time(() => pool.run(checkedPlan, modules, 30_000));
    check(withCheck.value);
    if (withCheck.value.checks.determinism?.status !== 'compared' || withCheck.value.checks.determinism.differences.length)
      throw new Error(`the determinism check did not run clean: ${JSON.stringify(withCheck.value.checks.determinism)}`);
    checked.push(withCheck.ms);
    checkedInRunner.push(withCheck.value.checks.determinism.ms);
    unchecked.push(ms);
    inRunner.push(value.executeMs);
    stepsSum.push(value.steps.reduce((sum, step) => sum + step.wallMs, 0));
    for (const step of value.steps) stepWall.set(step.op, [...(stepWall.get(step.op) ?? []), step.wallMs]);
    driverCalls.push(driverCallTimes(value.events ?? [], value.steps));
  }
  // The floor under any runner request: a status message there and back, no CUDA work.
  const { runner: warmRunner } = await pool.acquire(0);
  const emptyTrips: number[] = [];
  for (let i = 0; i < REPEATS; i++) emptyTrips.push((await time(() => warmRunner.request('status', {}, 5_000))).ms);
  console.log(
    `Determinism check (medians): the re-run ${median(unchecked).toFixed(2)} ms without it, ${median(checked).toFixed(2)} ms with it; the second run and its comparison inside the runner ${median(checkedInRunner).toFixed(2)} ms; the raw program's whole run (alloc, 2 uploads, launch, sync, read back, free) ${median(rawWarm).toFixed(2)} ms`,
  );
  console.log(
    `Warm re-run breakdown (medians): runner round trip ${median(warm).toFixed(2)} ms (an empty request there and back: ${median(emptyTrips).toFixed(2)} ms), plan inside the runner ${median(inRunner).toFixed(2)} ms, of which steps ${median(stepsSum).toFixed(2)} ms; per step: ${[
      ...stepWall,
    ]
      .map(([op, xs]) => `${op} ${median(xs).toFixed(3)}`)
      .join(', ')} ms (each op summed over its steps is not shown; these are per step)`,
  );

  console.log(`Warm re-run, the runner's driver calls and what is left of each step around them (medians of per-run sums, ms): ${medianSums(driverCalls)}`);

  // The whole path a user's re-run takes (plan check, compile cache, runner, diagnosis): unchanged
  // kernel, then an edited one (a compile each time) against the raw program doing the same in-process.
  let workbench = createWorkbench(forkLauncher);
  const full = async (src: string) => {
    const outcome = await workbench.runPlan({ ...plan, kernels: [{ ...plan.kernels[0]!, source: src }] }, { timeoutMs: 30_000 });
    if (outcome.status !== 'ok' || !outcome.result) throw new Error(`workbench run failed: ${outcome.diagnosis.headline}`);
    check(outcome.result);
    return outcome;
  };
  for (let i = 0; i < 3; i++) await full(source);
  const warmFull: number[] = [];
  const rawWarmFull: number[] = [];
  const fullParts: { checkMs: number; compileMs: number; runMs: number }[] = [];
  for (let i = 0; i < REPEATS; i++) {
    rawWarmFull.push(await raw.measure('run'));
    const { ms, value } = await time(() => full(source));
    warmFull.push(ms);
    fullParts.push(value.timing);
  }
  raw.close();
  console.log(
    `Full re-run breakdown (medians): plan checks ${median(fullParts.map((p) => p.checkMs)).toFixed(2)} ms, compile (cache) ${median(fullParts.map((p) => p.compileMs)).toFixed(2)} ms, runner ${median(fullParts.map((p) => p.runMs)).toFixed(2)} ms`,
  );
  if (RERUN_ONLY) {
    await workbench.dispose();
    await pool.dispose();
    return printRows(device.name, [
      ['fresh process to first result', median(cold), median(refCold.map((r) => r.wallMs))],
      ['re-run of an unchanged kernel (warm runner)', median(warm), median(rawWarm)],
      ['re-run of an unchanged kernel (whole path: checks, cache, runner)', median(warmFull), median(rawWarmFull)],
    ]);
  }
  // A code edit (a kernel with a name of its own appended) makes NVRTC compile for real; a comment edit
  // leaves the compiled program unchanged, and NVRTC 12.9+ answers it from the driver's compute cache.
  // NVRTC's speed differs by up to 40% between processes on these VMs (user CPU time, same compile:
  // which core a process lands on), so the edits run in blocks, each with a new raw program and a new
  // workbench (compile worker, runners): both sides' medians then span several placements.
  let edits = 0;
  const codeEdit = () => `${source}\n__global__ void edit_${++edits}_${Date.now()}(int* p) { if (p) *p = 1; }\n`;
  const commentEdit = () => `${source}\n// edit ${++edits} ${Date.now()}\n`;
  const edited: number[] = [];
  const rawEdits: number[] = [];
  const commented: number[] = [];
  const rawComments: number[] = [];
  const editParts: { checkMs: number; compileMs: number; runMs: number; inRunnerMs: number; inWorkerMs: number }[] = [];
  for (let block = 0; block < EDIT_BLOCKS; block++) {
    if (block > 0) {
      await workbench.dispose();
      workbench = createWorkbench(forkLauncher);
    }
    const blockRaw = await LineReference.start(ref, rawArgs);
    for (let i = 0; i < 3; i++) await full(codeEdit());
    for (let i = 0; i < EDITS_PER_BLOCK; i++) {
      rawEdits.push(await blockRaw.measure('edit'));
      const { ms, value } = await time(() => full(codeEdit()));
      edited.push(ms);
      editParts.push({ ...value.timing, inRunnerMs: value.result!.executeMs, inWorkerMs: value.compile[0]!.ms });
      rawComments.push(await blockRaw.measure('comment'));
      commented.push((await time(() => full(commentEdit()))).ms);
    }
    blockRaw.close();
  }
  console.log(
    `Edited kernel breakdown (medians): plan checks ${median(editParts.map((p) => p.checkMs)).toFixed(2)} ms, compile ${median(editParts.map((p) => p.compileMs)).toFixed(2)} ms (in the worker ${median(editParts.map((p) => p.inWorkerMs)).toFixed(2)} ms), runner ${median(editParts.map((p) => p.runMs)).toFixed(2)} ms (of which inside it ${median(editParts.map((p) => p.inRunnerMs)).toFixed(2)} ms, the module load included)`,
  );
  await workbench.dispose();

  const faultSource = readFileSync(join(root, 'samples/null-pointer/kernel.cu'), 'utf8');
  const faultCompiler = new CompileService(forkLauncher);
  const faulty = await faultCompiler.compile({ source: faultSource, sourceName: 'kernel.cu', options: { arch }, backend: 'auto' });
  await faultCompiler.dispose();
  const faultPlan: LaunchPlan = launchPlanSchema.parse(nullPointerPlan(faultSource));
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

  // Compile: an edited kernel (a new source each time, so no cache) through the workbench — worker
  // process, diagnostics, kernel facts — against the bare NVRTC call with the same options, in-process.
  const compileRows: (readonly [string, number, number])[] = [];
  if (discoverLibraries().nvrtc.loaded) {
    const addon = requireAddon();
    // On the JS thread, as in the compile worker (native/src/async.h): NVRTC measured ~1 ms slower on
    // a second thread than on the main one, in the raw C++ program as well.
    addon.setInline(true);
    const options = compileOptionsSchema.parse({ arch });
    const cacheDir = mkdtempSync(join(tmpdir(), 'gpu-workbench-bench-cache-'));
    const service = new CompileService(forkLauncher, new CompileCache(cacheDir));
    // Negative indices are the warm-ups: the kernel name takes the absolute value and a letter.
    const edited = (i: number) => `${source}\n__global__ void edit_${i < 0 ? `w${-i}` : i}_${Date.now()}(int* p) { if (p) *p = 1; }\n`;
    // Both sides warmed alike: with one warm-up the bare call measured 15 ms and the worker's 19 ms; with
    // eight, both 19 ms (H200). NVRTC costs the same in either process once warm.
    const warmups = Number(process.env['BENCH_WARMUP'] ?? 8);
    for (let w = 0; w < warmups; w++) {
      await service.compile({ source: edited(-1 - 2 * w), sourceName: 'vector_add.cu', options, backend: 'nvrtc' });
      await addon.nvrtcCompile({ source: edited(-2 - 2 * w), name: 'vector_add.cu', options: nvrtcArguments(options), nameExpressions: [] });
    }
    const bare: number[] = [];
    const workbench: number[] = [];
    const inCompiler: number[] = [];
    const inWorker: number[] = [];
    const cpu: NonNullable<CompiledResult['compilerCpu']>[] = [];
    for (let i = 0; i < 15; i++) {
      bare.push(
        (await time(() => addon.nvrtcCompile({ source: edited(2 * i), name: 'vector_add.cu', options: nvrtcArguments(options), nameExpressions: [] }))).ms,
      );
      const wb = await time(() => service.compile({ source: edited(2 * i + 1), sourceName: 'vector_add.cu', options, backend: 'nvrtc' }));
      workbench.push(wb.ms);
      inCompiler.push(wb.value.compilerMs ?? 0);
      inWorker.push(wb.value.workerMs ?? 0);
      if (wb.value.compilerCpu) cpu.push(wb.value.compilerCpu);
    }
    const hits: number[] = [];
    const same = edited(1000);
    await service.compile({ source: same, sourceName: 'vector_add.cu', options, backend: 'nvrtc' });
    for (let i = 0; i < 15; i++) hits.push((await service.compile({ source: same, sourceName: 'vector_add.cu', options, backend: 'nvrtc' })).ms);
    await service.dispose();
    console.log(
      `Compile breakdown (medians): NVRTC in the worker ${median(inCompiler).toFixed(2)} ms, whole worker ${median(inWorker).toFixed(2)} ms, host round trip ${median(workbench).toFixed(2)} ms; bare NVRTC in-process ${median(bare).toFixed(2)} ms`,
    );
    console.log(
      `NVRTC in the worker, its CPU use per compile (medians): user ${median(cpu.map((c) => c.userMs)).toFixed(2)} ms, system ${median(cpu.map((c) => c.systemMs)).toFixed(2)} ms, ${median(cpu.map((c) => c.minorFaults))} page faults, ${median(cpu.map((c) => c.involuntarySwitches))} involuntary switches`,
    );
    compileRows.push(
      ['edited kernel: compile to diagnostics and facts', median(workbench), median(bare)],
      ['unchanged kernel: compile cache hit', median(hits), median(bare)],
    );
  }

  const refColdMs = median(refCold.map((r) => r.wallMs));
  const rows = [
    ...compileRows,
    ['fresh process to first result', median(cold), refColdMs],
    ['re-run of an unchanged kernel (warm runner)', median(warm), median(rawWarm)],
    ['re-run of an unchanged kernel (whole path: checks, cache, runner)', median(warmFull), median(rawWarmFull)],
    ['determinism check: its extra time on a warm re-run, against one raw run', median(checked.map((c, i) => c - unchecked[i]!)), median(rawWarm)],
    ['edited kernel (code edit: NVRTC compiles), load, run, read back', median(edited), median(rawEdits)],
    ['comment-only edit (NVRTC answers from its cache), load, run, read back', median(commented), median(rawComments)],
    ['sticky fault (700) to next result', median(recovery), refColdMs],
  ] as const;
  const result = {
    device: device.name,
    n: N,
    repeats: REPEATS,
    rows: rows.map(([name, wb, raw]) => ({ name, workbenchMs: wb, rawMs: raw, ratio: wb / raw, overMs: wb - raw })),
    reference: { cold: refCold, warm: rawWarm, warmFull: rawWarmFull, edited: rawEdits, commented: rawComments },
    samples: { cold, warm, warmFull, edited, commented, recovery },
  };
  if (process.env['OUT'] && existsSync(process.env['OUT'])) writeFileSync(join(process.env['OUT'], 'bench.json'), JSON.stringify(result, null, 2));
  printRows(device.name, rows);
  console.log('(re-run and edited rows: the raw program timed the same work just before each workbench measurement, alternating)');
  console.log('(compile rows: the reference is a bare nvrtcCompileProgram call with the same options, in-process)');
  console.log(`(the fault row's raw figure is a fresh process: what recovery costs without a warm spare; faults seen: ${[...new Set(faultCodes)].join(', ')})`);
}

/** The rows as a table: each measure, the workbench's figure beside the raw reference's. */
function printRows(deviceName: string, rows: readonly (readonly [string, number, number])[]): void {
  console.log(`\n${deviceName}, vecAdd n=${N} (alloc, upload 2 buffers, launch, sync, read back, free)`);
  console.log('| measure | workbench | raw reference | difference |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const [name, wb, raw] of rows)
    console.log(
      `| ${name} | ${wb.toFixed(2)} ms | ${raw.toFixed(2)} ms | ${wb - raw >= 0 ? '+' : ''}${(wb - raw).toFixed(2)} ms (${(wb / raw).toFixed(2)}×) |`,
    );
}

main().catch((error) => {
  console.error(`✗ ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});

/** Per run: the driver calls' host time summed by kind (a copy or memset by why), and each step's wall time outside them. */
function driverCallTimes(events: RunLogEvent[], steps: { op: string; wallMs: number }[]): Map<string, number> {
  const sums = new Map<string, number>();
  const add = (key: string, ms: number) => sums.set(key, (sums.get(key) ?? 0) + ms);
  const inStep = new Map<number, number>();
  for (const e of events) {
    if (e.phase !== 'run') continue;
    const key = e.kind === 'copy' ? `${e.direction} ${e.why}` : e.kind === 'memset' ? `memset ${e.why}` : e.kind;
    add(key, e.dur);
    if (e.step !== null) inStep.set(e.step, (inStep.get(e.step) ?? 0) + e.dur);
  }
  steps.forEach((step, i) => add(`${step.op} (outside calls)`, step.wallMs - (inStep.get(i) ?? 0)));
  return sums;
}

function medianSums(runs: Map<string, number>[]): string {
  const keys = [...new Set(runs.flatMap((r) => [...r.keys()]))];
  return keys.map((k) => `${k} ${median(runs.map((r) => r.get(k) ?? 0)).toFixed(3)}`).join(', ');
}
