import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { SanitizerTool } from '../core/sanitizer/findings';
import { DEFAULT_SANITIZER_OPTIONS, sanitizerArguments, sanitizeProgramArguments } from '../core/sanitizer/sanitizer-args';
import { diagnoseProgram } from '../main/diagnose/diagnose-service';
import { projectRoot } from '../main/paths';
import { BoundedOutput } from '../main/tools/bounded-output';
import { locateComputeSanitizer } from '../main/tools/compute-sanitizer';
import { collectReport, sanitizeProgram } from '../main/tools/sanitize-program';
import { runToolProgram } from '../main/tools/tool-program';

/**
 * `node dist/bench/diagnose-steps.js [rounds]` (GPU machine): where a diagnosis's compute-sanitizer step spends the
 * time its by-hand counterpart does not. For one step of two samples, alternating: the bare tool (spawnSync, the
 * options a person would type), the tool through the workbench's spawn path alone, the report read after it, the
 * whole sanitize service (what `gpu-workbench sanitize` costs in a running host), and the same step inside a whole
 * diagnosis (its own duration as the report gives it).
 */
const ROUNDS = Number(process.argv[2] ?? 5);
const root = projectRoot();
const sanitizer = locateComputeSanitizer().path;
/** `f`'s answer; its wall time is added to `row`. */
async function timed<T>(row: number[], f: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const answer = await f();
  row.push(performance.now() - started);
  return answer;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const cases: { name: string; script: string; tool: SanitizerTool; thorough: boolean }[] = [
  { name: 'ctypes-segfault', script: 'peek.py', tool: 'memcheck', thorough: false },
  { name: 'cupy-race', script: 'reduce.py', tool: 'memcheck', thorough: true },
  { name: 'cupy-race', script: 'reduce.py', tool: 'racecheck', thorough: true },
];

async function main(): Promise<void> {
  if (!sanitizer) {
    console.error('✗ compute-sanitizer was not found: this benchmark needs it (and a GPU).');
    process.exit(2);
  }
  const work = mkdtempSync(join(tmpdir(), 'diagnose-steps-'));
  const warmCache = join(work, 'cupy-cache');
  console.log(`Where a diagnosis's sanitizer step spends its time (${ROUNDS} rounds, alternating, medians, ms)`);
  console.log(
    'case | bare tool | tool via the workbench spawn | + its XML read by a reader started after it | sanitize service | the service, its CuPy cache warm | the step in a diagnosis',
  );
  for (const c of cases) {
    const cwd = join(root, 'samples/programs', c.name);
    const argv = ['python3', c.script];
    const options = { ...DEFAULT_SANITIZER_OPTIONS, tool: c.tool, printLimit: 1000, leakCheck: c.tool === 'memcheck' };
    const rows = { bare: [] as number[], spawn: [] as number[], read: [] as number[], service: [] as number[], warm: [] as number[], step: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      const dir = join(work, `${c.name}-${c.tool}-${i}`);
      mkdirSync(dir);
      await timed(rows.bare, async () =>
        spawnSync(sanitizer, [...sanitizerArguments(options, join(dir, 'hand-%p.xml')), ...argv], {
          cwd,
          stdio: ['ignore', 'pipe', 'pipe'],
          maxBuffer: 2 ** 28,
        }),
      );

      const ours = join(dir, 'ours');
      mkdirSync(ours);
      const exit = await timed(rows.spawn, () =>
        runToolProgram(sanitizer, sanitizeProgramArguments(options, join(ours, 'report-%p.xml'), argv), {
          name: 'bench-sanitize',
          cwd,
          env: process.env,
          timeoutMs: 600_000,
        }),
      );
      const run = { tool: c.tool, command: argv, cwd, sanitizer: { path: sanitizer, version: null }, output: exit.output ?? new BoundedOutput() };
      await timed(rows.read, () =>
        collectReport({ ...run, exitCode: exit.code, signal: exit.signal, timedOut: exit.timedOut, cancelled: exit.cancelled, started: 0, dir: ours }),
      );
      const service = (env?: Record<string, string>) =>
        sanitizeProgram({ tool: c.tool, command: argv, cwd, env, options: { leakCheck: c.tool === 'memcheck', printLimit: 1000 } });
      await timed(rows.service, () => service());
      await timed(rows.warm, () => service({ CUPY_CACHE_DIR: warmCache }));

      const report = await diagnoseProgram({ argv, cwd, thorough: c.thorough, budgetMs: 900_000 });
      rows.step.push(report.steps.find((s) => s.kind === c.tool)?.durationMs ?? NaN);
      console.log(`# ${c.name} ${c.tool} round ${i + 1}: steps ${report.steps.map((s) => `${s.kind} ${(s.durationMs ?? 0).toFixed(0)}`).join(', ')}`);
      rmSync(dir, { recursive: true, force: true });
    }
    const m = (xs: number[]) => median(xs).toFixed(0);
    console.log(`${c.name} ${c.tool} | ${m(rows.bare)} | ${m(rows.spawn)} | ${m(rows.read)} | ${m(rows.service)} | ${m(rows.warm)} | ${m(rows.step)}`);
  }
  rmSync(work, { recursive: true, force: true });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
