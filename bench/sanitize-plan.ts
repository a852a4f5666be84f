import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { generateRepro } from '../core/bundle/repro';
import { launchPlanSchema } from '../core/plan/plan-schema';
import type { SanitizerTool } from '../core/sanitizer/findings';
import { DEFAULT_SANITIZER_OPTIONS, sanitizerArguments } from '../core/sanitizer/sanitizer-args';
import { CompileCache } from '../main/compile/compile-cache';
import { CompileService } from '../main/compile/compile-service';
import { forkLauncher } from '../main/process/launcher';
import { loadSample } from '../main/services/sample-service';
import { sanitizePlan } from '../main/services/sanitize-plan-service';
import { SanitizerSpares } from '../main/services/sanitized-runner';
import { locateComputeSanitizer } from '../main/tools/compute-sanitizer';

/**
 * `npm run bench:sanitize-plan` (GPU machine, with compute-sanitizer and nvcc): a plan's run under the tool through
 * the workbench (the service the UI's "Re-run under compute-sanitizer" calls, in a running host: a runner of its own
 * under the tool, the host program's checks only, the XML read and each finding named against the plan's buffers)
 * against the bare tool, with the same options, on the same launches: the plan's repro.cu (what a bundle carries,
 * core/bundle/repro.ts) built with nvcc. Each tool on the gallery sample it is for, the fixed variant. Alternating,
 * one for one, because these machines' speed drifts. Target: ≤ 1.10× the bare tool.
 */
const REPEATS = Number(process.argv[2] ?? 3);
const { path: sanitizer } = locateComputeSanitizer();
if (!sanitizer) {
  console.error('✗ compute-sanitizer was not found: this benchmark needs it (and a GPU).');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'gpu-workbench-sanitize-plan-bench-'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
type Parts = { before: number; run: number; inRunner: number; leave: number; read: number };
const partsText = (parts: Parts[]) =>
  `until the run was sent ${median(parts.map((p) => p.before)).toFixed(0)} ms, the run (a runner's start under the tool included, where it had to start) ${median(parts.map((p) => p.run)).toFixed(0)} ms (the plan inside the runner ${median(parts.map((p) => p.inRunner)).toFixed(0)} ms), then the runner leaving and the tool ending ${median(parts.map((p) => p.leave)).toFixed(0)} ms, then reading its report ${median(parts.map((p) => p.read)).toFixed(0)} ms`;

/** Whether a spare is held and its context open (waits up to 10 s for one started after the last run). */
async function spareReady(spares: SanitizerSpares): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (spares.spareStatus()?.contextReady === true) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

const cases: { sample: string; tool: SanitizerTool }[] = [
  { sample: 'oob-off-by-one', tool: 'memcheck' },
  { sample: 'shared-memory-race', tool: 'racecheck' },
  { sample: 'uninitialised-read', tool: 'initcheck' },
];

async function main(): Promise<void> {
  const compiler = new CompileService(forkLauncher, new CompileCache(join(dir, 'compile-cache')));
  const rows: { name: string; bare: number; workbench: number; fresh: number; findings: string; where: string }[] = [];
  for (const { sample, tool } of cases) {
    const loaded = await loadSample(sample, 'fixed');
    const plan = launchPlanSchema.parse(loaded.plan);
    const source = join(dir, `${sample}.cu`);
    const binary = join(dir, sample);
    writeFileSync(source, generateRepro(plan).get('repro/repro.cu')!);
    execFileSync('nvcc', ['-arch=native', '-lineinfo', '-o', binary, source], { stdio: 'inherit' });
    const bareArgs = [...sanitizerArguments({ ...DEFAULT_SANITIZER_OPTIONS, tool }, join(dir, `bare-${tool}-%p.xml`)), binary];
    const bareOnce = () => {
      const started = performance.now();
      const r = spawnSync(sanitizer!, bareArgs, { stdio: 'ignore', timeout: 600_000 });
      if (r.error) throw r.error;
      // The fixed variant runs clean: a bare tool that failed fast would make the workbench look slow.
      if (r.status !== 0) throw new Error(`the bare ${tool} on ${sample}'s repro exited ${r.status ?? r.signal}: not a clean run to compare with`);
      return performance.now() - started;
    };
    // The host keeps a runner under the tool started ahead for the next re-run (main/services/sanitized-runner.ts): the
    // UI's Re-run under compute-sanitizer, a second time. Without spares, each run starts its runner under the tool.
    const spares = new SanitizerSpares();
    const workbenchOnce = async (withSpares: boolean) => {
      if (withSpares) await spareReady(spares);
      const takenBefore = spares.taken;
      const started = performance.now();
      const at: Record<string, number> = {};
      const { outcome, report } = await sanitizePlan(
        {
          plan: loaded.plan,
          planPath: loaded.planPath,
          tool,
          onEvent: (e) => e.kind === 'phase' && (at[e.phase] = performance.now() - started),
          onToolEnded: () => (at['ended'] = performance.now() - started),
        },
        compiler,
        withSpares ? spares : null,
      );
      const ms = performance.now() - started;
      if (outcome.status !== 'ok') throw new Error(`${sample} under ${tool}: ${outcome.diagnosis.headline}`);
      (withSpares ? partsSpare : parts).push({
        before: at['run'] ?? NaN,
        run: (at['diagnose'] ?? NaN) - (at['run'] ?? NaN),
        inRunner: outcome.result?.executeMs ?? NaN,
        leave: (at['ended'] ?? NaN) - (at['diagnose'] ?? NaN),
        read: ms - (at['ended'] ?? NaN),
      });
      if (withSpares && spares.taken === takenBefore) missedSpares++;
      if (withSpares) lastSteps = (outcome.result?.steps ?? []).map((st) => `${st.op} ${st.wallMs.toFixed(1)}`).join(', ');
      return { ms, verdict: `${report.verdict}, ${report.findings} findings` };
    };
    const underTool = (argv: string[], env: NodeJS.ProcessEnv = process.env) => {
      const started = performance.now();
      spawnSync(sanitizer!, [...sanitizerArguments({ ...DEFAULT_SANITIZER_OPTIONS, tool }, join(dir, `node-${tool}-%p.xml`)), ...argv], {
        stdio: 'ignore',
        env,
      });
      return performance.now() - started;
    };
    const nodeUnderTool = () => underTool([process.execPath, '-e', '0']);
    const oneThread = () => underTool(['true']);
    const parts: Parts[] = [];
    const partsSpare: Parts[] = [];
    let missedSpares = 0;
    let lastSteps = '';
    const nodeBoot: number[] = [];
    const cProgram: number[] = [];
    // The first of each pays for loading the tool and filling the compile cache: not counted on either side. The first
    // with spares starts the spare the counted ones take.
    bareOnce();
    await workbenchOnce(false);
    let findings = (await workbenchOnce(true)).verdict;
    parts.length = partsSpare.length = 0;
    missedSpares = 0;
    const bare: number[] = [];
    const workbench: number[] = [];
    const fresh: number[] = [];
    for (let i = 0; i < REPEATS; i++) {
      bare.push(bareOnce());
      nodeBoot.push(nodeUnderTool());
      cProgram.push(oneThread());
      const w = await workbenchOnce(true);
      workbench.push(w.ms);
      findings = w.verdict;
      // A run on a new runner (the first run under a tool, or after the spare's idle minutes); the spare started after
      // the run above waits meanwhile, as it would in the host.
      fresh.push((await workbenchOnce(false)).ms);
    }
    await spares.dispose();
    rows.push({
      name: `${tool}, ${sample} (fixed)`,
      bare: median(bare),
      workbench: median(workbench),
      fresh: median(fresh),
      findings,
      where: `a re-run (the spare taken ${REPEATS - missedSpares} of ${REPEATS} times): ${partsText(partsSpare)}; on a new runner: ${partsText(parts)}; the bare tool running \`node -e 0\` ${median(nodeBoot).toFixed(0)} ms, running \`true\` ${median(cProgram).toFixed(0)} ms; the last re-run's steps (ms): ${lastSteps}`,
    });
  }
  await compiler.dispose();
  console.log(`compute-sanitizer at ${sanitizer}, ${REPEATS} runs each, alternating (medians)`);
  console.log(
    '| plan under the tool | bare compute-sanitizer on repro.cu | a re-run in the running host (the UI’s) | ratio | the first run (a new runner) | ratio | the report |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- |');
  for (const r of rows)
    console.log(
      `| ${r.name} | ${r.bare.toFixed(0)} ms | ${r.workbench.toFixed(0)} ms | ${(r.workbench / r.bare).toFixed(3)}× | ${r.fresh.toFixed(0)} ms | ${(r.fresh / r.bare).toFixed(3)}× | ${r.findings} |`,
    );
  console.log('(target: ≤ 1.10× the bare tool)');
  for (const r of rows) console.log(`${r.name}, the workbench's parts (medians): ${r.where}`);
}

main()
  .catch((error: unknown) => {
    console.error(`✗ ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  })
  .finally(() => rmSync(dir, { recursive: true, force: true }));
