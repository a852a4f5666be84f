import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';

import { startedByThisTest } from '../helpers/own-processes-tag';

import type { FindingGroup } from '../../core/sanitizer/findings';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { forkLauncher } from '../../main/process/launcher';
import { workbenchPids } from '../../main/process/own-processes';
import { listProcesses, processRuns } from '../../main/process/process-state';
import { readPlanFile } from '../../main/services/plan-files';
import { loadSample } from '../../main/services/sample-service';
import { sanitizePlan } from '../../main/services/sanitize-plan-service';
import { SanitizerSpares } from '../../main/services/sanitized-runner';
import { createWorkbench } from '../../main/workbench';
import { parseJson, ROOT, runCli, SAMPLES, type CliResult } from '../helpers/cli';

// compute-sanitizer in the loop, on the real tool: every memory fault of the gallery under memcheck names its
// line and the buffer it overran; racecheck the race's lines; initcheck the uninitialised read; synccheck the
// divergent barrier; every fixed variant comes back clean. And for programs the workbench did not write: a
// CuPy RawKernel that writes out of bounds, and a ctypes program that exits without cudaFree.
const out = process.env['GPU_WORKBENCH_FIXTURES_OUT'];
const record = (name: string, r: CliResult) => {
  if (!out) return;
  mkdirSync(join(out, 'sanitize'), { recursive: true });
  writeFileSync(join(out, 'sanitize', `${name}.json`), r.stdout);
};

interface Case {
  sample: string;
  tool: 'memcheck' | 'racecheck' | 'initcheck' | 'synccheck';
  kind: FindingGroup['kind'];
  file: string;
  lines: number[];
  /** How the address is named against the plan's buffers (null: no buffer near it, as for a null pointer). */
  address: RegExp | null;
}

const CASES: Case[] = [
  { sample: 'oob-off-by-one', tool: 'memcheck', kind: 'memory-access', file: 'broken.cu', lines: [5], address: /past the end of `x` \(allocated at step 1\)/ },
  { sample: 'missing-bounds-check', tool: 'memcheck', kind: 'memory-access', file: 'broken.cu', lines: [5], address: /past the end of `(in|out)`/ },
  { sample: 'null-pointer', tool: 'memcheck', kind: 'memory-access', file: 'kernel.cu', lines: [10], address: null },
  { sample: 'misaligned-access', tool: 'memcheck', kind: 'memory-access', file: 'broken.cu', lines: [6], address: /into `in`/ },
  {
    sample: 'use-after-free',
    tool: 'memcheck',
    kind: 'memory-access',
    file: 'kernel.cu',
    lines: [4],
    address: /into `x` \(allocated at step \d+, freed at step \d+\)/,
  },
  { sample: 'uninitialised-read', tool: 'initcheck', kind: 'uninitialised-read', file: 'broken.cu', lines: [5], address: /into `out`/ },
  { sample: 'shared-memory-race', tool: 'racecheck', kind: 'race', file: 'broken.cu', lines: [7, 8], address: null },
  { sample: 'divergent-barrier', tool: 'synccheck', kind: 'barrier', file: 'broken.cu', lines: [12], address: null },
];

const sanitize = (args: string[]) => runCli(['sanitize', '--json', ...args], { timeoutMs: 300_000 });

/** A few at once: each is a tool, a node and a GPU context; the machine has cores to spare. */
async function inBatches<T, R>(items: T[], size: number, each: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size) results.push(...(await Promise.all(items.slice(i, i + size).map(each))));
  return results;
}

test('sanitize every gallery fault with its tool: the line, the buffer; every fixed variant clean', async () => {
  const failures: string[] = [];
  await inBatches(CASES, 4, async (c) => {
    const broken = await sanitize(['--tool', c.tool, '--sample', c.sample]);
    record(`${c.sample}-${c.tool}-broken`, broken);
    const { report } = parseJson<{ report: SanitizeReport }>(broken);
    // The report is read once the tool has written it, also after a sticky fault (the runner retired, then left):
    // its XML read and kept for a bundle, its exit status known. Collected too early, memcheck's came from the text.
    if (!report.xmlFiles.length || !report.rawXml?.length || report.findingsFrom !== 'xml' || report.exitCode === null)
      failures.push(
        `${c.sample}: the tool's report was not waited for: ${report.xmlFiles.length} XML files, ${report.rawXml?.length ?? 0} kept, findings from ${report.findingsFrom}, exit ${report.exitCode}; ${report.problems.join(' ')}`,
      );
    const group = report.groups.find((g) => g.kind === c.kind && g.where?.path && basename(g.where.path) === c.file);
    const line = (g: FindingGroup | undefined) =>
      g?.kind === 'race' ? [g.example.race?.first.where?.line, g.example.race?.second.where?.line] : [g?.where?.line];
    console.log(
      `# ${c.sample} (${c.tool}): ${report.verdict}, ${report.headline} ${(report.durationMs / 1000).toFixed(1)} s; ${group ? `${basename(group.where!.path!)}:${line(group).join('/')} ×${group.count}${group.addressNamed ? `, ${group.addressNamed}` : ''}` : 'no group'}`,
    );
    if (broken.code !== 1 || report.verdict !== 'found')
      failures.push(`${c.sample}: exit ${broken.code}, verdict ${report.verdict}: ${report.headline} ${report.details.join(' ')}`);
    else if (!group) failures.push(`${c.sample}: no ${c.kind} group in ${c.file}: ${JSON.stringify(report.groups.map((g) => [g.kind, g.where]))}`);
    else {
      if (!line(group).some((l) => typeof l === 'number' && c.lines.includes(l)))
        failures.push(`${c.sample}: line ${line(group).join('/')}, expected ${c.lines.join(' or ')}`);
      if (c.address && !c.address.test(group.addressNamed ?? '')) failures.push(`${c.sample}: address named "${group.addressNamed}", expected ${c.address}`);
    }
    const fixed = await sanitize(['--tool', c.tool, '--sample', c.sample, '--fixed']);
    record(`${c.sample}-${c.tool}-fixed`, fixed);
    const clean = parseJson<{ report: SanitizeReport }>(fixed).report;
    if (fixed.code !== 0 || clean.verdict !== 'clean')
      failures.push(`${c.sample} fixed: exit ${fixed.code}, ${clean.verdict}: ${clean.headline} ${JSON.stringify(clean.groups.map((g) => g.text))}`);
  });
  assert.deepEqual(failures, []);
});

test('sanitize any program: a CuPy RawKernel writing past the end — its line, and the Python line that launched it', async () => {
  const r = await sanitize(['--', 'python3', join(ROOT, 'samples/programs/cupy-out-of-bounds/oob.py')]);
  record('program-cupy-oob', r);
  const report = parseJson<SanitizeReport>(r);
  assert.equal(report.verdict, 'found', `${report.headline} ${report.details.join(' ')}`);
  const write = report.groups.find((g) => g.kind === 'memory-access')!;
  assert.ok(write, JSON.stringify(report.groups.map((g) => g.text)));
  assert.equal(write.where?.func, 'scale');
  assert.equal(write.where?.line, 4, JSON.stringify(write.where));
  assert.equal(write.userFrame?.file && basename(write.userFrame.file), 'oob.py', JSON.stringify(write.userFrame));
  console.log(`# CuPy: ${write.where?.path}:${write.where?.line}, launched from ${write.userFrame?.file}:${write.userFrame?.line}`);
});

test('sanitize any program: ctypes exiting without cudaFree — the leaked bytes, and the Python line that allocated them', async () => {
  const r = await sanitize(['--', 'python3', join(ROOT, 'samples/programs/ctypes-leak/leak.py')]);
  record('program-ctypes-leak', r);
  const report = parseJson<SanitizeReport>(r);
  assert.equal(report.verdict, 'found', report.headline);
  const leak = report.groups.find((g) => g.kind === 'leak')!;
  assert.equal(leak.leakedBytes, 1 << 20);
  assert.deepEqual([leak.userFrame?.file && basename(leak.userFrame.file), leak.userFrame?.line], ['leak.py', 24]);
  assert.match(report.programOutput, /exiting without cudaFree/);
});

test("out of memory under compute-sanitizer: the workbench's own processes holding the device (the app's runner, the tool's runner) are named as its own", async () => {
  const workbench = createWorkbench(forkLauncher, { warmSpare: false });
  try {
    // The app's own pool holds a context (about 500 MiB) while the sanitized run asks for too much.
    const { plan: warm } = await readPlanFile(join(SAMPLES, 'vector-add/plan.json'));
    assert.equal((await workbench.runPlan(warm, { timeoutMs: 60_000 })).status, 'ok');
    const appRunners = workbench.pool.status().runners.map((r) => r.pid);
    const sample = await loadSample('allocation-too-large', 'broken');
    const { outcome } = await sanitizePlan({ plan: sample.plan, planPath: sample.planPath, tool: 'memcheck' }, workbench.compiler);
    assert.equal(outcome.diagnosis.kind, 'out-of-memory', outcome.diagnosis.headline);
    const holders = outcome.diagnosis.specifics.filter((line) => /^Process \d+ \(/.test(line));
    console.log(`# app runners ${appRunners.join(', ')}; the diagnosis says: ${holders.join(' | ') || 'no process (NVML lists none here)'}`);
    for (const pid of appRunners) {
      const line = holders.find((l) => l.startsWith(`Process ${pid} (`));
      if (line) assert.match(line, /a GPU Workbench runner/, line);
    }
    // Nothing this host started is called someone else's: every pid under this host that NVML listed is named as ours.
    const own = new Set(workbenchPids(appRunners));
    for (const line of holders) {
      const pid = Number(/^Process (\d+)/.exec(line)![1]);
      if (own.has(pid)) assert.match(line, /a GPU Workbench runner/, line);
    }
  } finally {
    await workbench.dispose();
  }
});

test('a plan that does not compile is not called clean: the tool checked nothing, and the exit says so', async () => {
  // Its runner starts under the tool beside the compile: the report of that runner saw nothing of the plan.
  const r = await sanitize([
    '--tool',
    'memcheck',
    join(SAMPLES, 'syntax-error/missing_semicolon.cu'),
    ...['--kernel', 'scale', '--grid', '1', '--block', '32', '--arg', 'data:f32[32]=0', '--arg', 'factor:f32=2', '--arg', 'n:i32=32'],
  ]);
  const { report, run } = parseJson<{ report: SanitizeReport; run: { status: string } }>(r);
  assert.notEqual(r.code, 0);
  assert.equal(run.status, 'compile-error');
  assert.deepEqual([report.verdict, report.headline], ['no-cuda', 'memcheck checked nothing: the plan never ran.']);
});

test('a re-run under the same tool takes the runner started ahead: the same findings, and the spare stopped leaves nothing', async () => {
  const spares = new SanitizerSpares();
  const workbench = createWorkbench(forkLauncher, { warmSpare: false });
  try {
    const sample = await loadSample('oob-off-by-one', 'broken');
    const once = () => sanitizePlan({ plan: sample.plan, planPath: sample.planPath, tool: 'memcheck' }, workbench.compiler, spares);
    const first = await once();
    // The spare starts once the first run's tool has ended: it is ready well within this wait.
    let spare: number | null = null;
    for (let i = 0; i < 200 && spare === null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      spare = spares.spareStatus()?.pid ?? null;
    }
    assert.ok(spare, 'a spare runner under memcheck was started after the first run');
    assert.equal(spares.taken, 0);
    const t0 = performance.now();
    const second = await once();
    const ms = performance.now() - t0;
    assert.equal(spares.taken, 1, 'the second run took the spare');
    assert.equal(processRuns(spare), false, 'the spare ran the run and left');
    assert.notEqual(second.outcome.result?.runnerPid, first.outcome.result?.runnerPid);
    const kinds = (r: SanitizeReport) => r.groups.map((g) => `${g.kind} ${g.example.where?.func ?? '?'} line ${g.example.where?.line ?? '?'}`).sort();
    assert.deepEqual(kinds(second.report), kinds(first.report));
    assert.equal(second.report.findings, first.report.findings);
    assert.ok(first.report.findings > 0, 'the broken sample has findings');
    console.log(
      `# first run ${first.report.durationMs.toFixed(0)} ms on a new runner; the re-run on the spare ${ms.toFixed(0)} ms; ${second.report.findings} findings both times`,
    );
  } finally {
    await spares.dispose();
    await workbench.dispose();
  }
  assert.equal(spares.spareStatus()?.pid ?? null, null);
  const left = listProcesses().filter((p) => /compute-sanitizer|dist\/main\/runner\.js/.test(p.cmdline) && startedByThisTest(p.pid));
  assert.deepEqual(left, [], 'no tool or runner is left once the spares are stopped');
});

test('after the sanitizer runs: no tool, runner or program left, and the next plain run is unharmed', async () => {
  const left = listProcesses().filter(
    (p) => /compute-sanitizer|dist\/main\/runner\.js|oob\.py|leak\.py/.test(p.cmdline) && p.pid !== process.pid && startedByThisTest(p.pid),
  );
  assert.deepEqual(left, []);
  const r = await runCli(['run', '--sample', 'oob-off-by-one', '--fixed', '--json'], { timeoutMs: 120_000 });
  assert.equal(r.code, 0, r.stdout.slice(-2000));
});
