import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { diagnoseProgram, type DiagnoseEvent } from '../../main/diagnose/diagnose-service';
import { sweepAbandoned } from '../../main/services/private-folder';
import { listProcesses, processRuns } from '../../main/process/process-state';
import SHIM from '../../main/diagnose/python/sitecustomize.py';
import { runCli } from '../helpers/cli';
import { sanitizerStandIn } from '../helpers/sanitizer-stand-in';

const node = process.execPath;
const hasPython = spawnSync('python3', ['-c', 'pass']).status === 0;

test('a program that hangs is stopped at the budget, its children too, and the report says what was not done', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'diagnose-hang-'));
  const pids = join(dir, 'pids');
  // A parent that starts a child, both of which ignore SIGTERM: only the group's SIGKILL ends them.
  const script = `
    const { spawn } = require('node:child_process');
    process.on('SIGTERM', () => {});
    const child = spawn(process.execPath, ['-e', 'process.on("SIGTERM", () => {}); setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    require('node:fs').writeFileSync(${JSON.stringify(pids)}, process.pid + ' ' + child.pid);
    console.log('working…');
    setInterval(() => {}, 1000);`;
  const started = performance.now();
  const report = await diagnoseProgram({ argv: [node, '-e', script], cwd: dir, budgetMs: 2_500 });
  const took = performance.now() - started;
  const [parent, child] = readFileSync(pids, 'utf8').split(' ').map(Number);
  assert.equal(report.verdict.kind, 'stopped', report.verdict.sentence);
  assert.match(report.verdict.sentence, /the time budget ran out/);
  const asIs = report.steps.find((s) => s.kind === 'as-is')!;
  assert.ok(
    asIs.findings.some((f) => /budget ran out/.test(f)),
    asIs.findings.join(' | '),
  );
  assert.ok(took < 2_500 + 2_000 + 1_500, `stopped within the budget and the grace: ${Math.round(took)} ms`);
  for (const pid of [parent!, child!]) assert.equal(processRuns(pid), false, `pid ${pid} is gone`);
  assert.deepEqual(
    listProcesses().filter((p) => p.cmdline.includes('process.on("SIGTERM"')),
    [],
    'nothing left running',
  );
});

test('the command is passed as words: shell characters reach the program as typed, and nothing is run by a shell', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'diagnose-words-'));
  const marker = join(dir, 'pwned');
  const words = [`$(touch ${marker})`, `; touch ${marker}`, '`id`', '"quoted" \'single\'', '*', '$HOME', '&& echo no', '| cat', '\n'];
  const output: string[] = [];
  const report = await diagnoseProgram({
    argv: [node, '-e', 'console.log(JSON.stringify(process.argv.slice(1)))', ...words],
    cwd: dir,
    budgetMs: 30_000,
    onEvent: (e: DiagnoseEvent) => {
      if (e.kind === 'output') output.push(e.text);
    },
  });
  assert.deepEqual(JSON.parse(output.join('').trim()), words);
  assert.equal(existsSync(marker), false);
  assert.equal(report.verdict.kind, 'clean');
  assert.deepEqual(report.offered, ['memcheck', 'racecheck', 'initcheck']);
  assert.deepEqual(report.evidence.runs[0]!.argv.slice(3), words);
});

test('output reaches the caller as it is written, not when the program ends', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'diagnose-stream-'));
  const seen: number[] = [];
  let started = 0;
  await diagnoseProgram({
    argv: [node, '-e', 'console.log("first"); setTimeout(() => console.log("second"), 1500)'],
    cwd: dir,
    budgetMs: 30_000,
    onEvent: (e) => {
      if (e.kind === 'step-started' && e.step.kind === 'as-is') started = performance.now();
      if (e.kind === 'output' && /first/.test(e.text)) seen.push(performance.now() - started);
    },
  });
  assert.equal(seen.length, 1);
  assert.ok(seen[0]! < 1_000, `the first line came ${Math.round(seen[0]!)} ms after the start, before the program ended`);
});

test(
  'a failing program is read with the explain engine: exit code, traceback, no re-run for a Python error',
  { skip: !hasPython && 'python3 is not here' },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'diagnose-py-'));
    writeFileSync(join(dir, 'bad.py'), 'def f(x):\n    return x["missing"]\n\nf({})\n');
    const report = await diagnoseProgram({ argv: ['python3', 'bad.py'], cwd: dir, budgetMs: 30_000 });
    assert.equal(report.verdict.kind, 'python-error');
    assert.equal(report.verdict.userLine?.line, 2);
    assert.deepEqual(
      report.steps.map((s) => s.kind),
      ['environment', 'as-is'],
    );
  },
);

test('the CLI: no program, a missing program and a missing folder are usage errors; --json is the report', async () => {
  const none = await runCli(['diagnose']);
  assert.equal(none.code, 64);
  assert.match(none.stderr, /Give the program after --/);
  const missing = await runCli(['diagnose', '--', 'no-such-program-here']);
  assert.equal(missing.code, 64);
  assert.match(missing.stderr, /no-such-program-here was not found on PATH/);
  const folder = await runCli(['diagnose', '--cwd', '/no/such/folder', '--', node, '-e', '0']);
  assert.equal(folder.code, 64);
  const budget = await runCli(['diagnose', '--budget', '0', '--', node, '-e', '0']);
  assert.equal(budget.code, 64);
  const json = await runCli(['diagnose', '--json', '--', node, '-e', 'process.exit(3)']);
  assert.equal(json.code, 1);
  const report = JSON.parse(json.stdout) as { verdict: { kind: string; sentence: string } };
  assert.equal(report.verdict.kind, 'unexplained-exit');
  assert.match(report.verdict.sentence, /exited with code 3/);
});

test('private folders left by a host that died are swept at the next start; a live host’s are kept', async () => {
  const root = mkdtempSync(join(tmpdir(), 'diagnose-sweep-'));
  const dead = join(root, 'gpu-workbench-diagnose-999999999-abc');
  const live = join(root, `gpu-workbench-diagnose-${process.pid}-def`);
  const other = join(root, 'unrelated');
  for (const d of [dead, live, other]) mkdirSync(d);
  assert.deepEqual(await sweepAbandoned(root), ['gpu-workbench-diagnose-999999999-abc']);
  assert.deepEqual([existsSync(dead), existsSync(live), existsSync(other)], [false, true, true]);
});

test(
  'the allocator-history shim: arms once torch is imported, keeps the program’s PYTHONPATH and its own sitecustomize',
  { skip: !hasPython && 'python3 is not here' },
  () => {
    // A stand-in torch package records what the shim calls: this checks the import hook, not PyTorch (the GPU suite does that).
    const dir = mkdtempSync(join(tmpdir(), 'diagnose-shim-'));
    mkdirSync(join(dir, 'shim'));
    writeFileSync(join(dir, 'shim', 'sitecustomize.py'), SHIM);
    mkdirSync(join(dir, 'lib', 'torch', 'cuda'), { recursive: true });
    writeFileSync(
      join(dir, 'lib', 'torch', '__init__.py'),
      'import sys\n__version__ = "stand-in"\ncalls = []\nfrom . import cuda\nclass _C:\n    @staticmethod\n    def _cuda_attach_out_of_memory_observer(f):\n        calls.append("observer")\n',
    );
    writeFileSync(join(dir, 'lib', 'torch', 'cuda', '__init__.py'), 'from . import memory\n');
    writeFileSync(
      join(dir, 'lib', 'torch', 'cuda', 'memory.py'),
      'def _record_memory_history(max_entries=0):\n    import torch; torch.calls.append(("history", max_entries))\n',
    );
    mkdirSync(join(dir, 'own'));
    writeFileSync(join(dir, 'own', 'sitecustomize.py'), 'import builtins\nbuiltins.OWN_SITECUSTOMIZE = True\n');
    const notes = join(dir, 'notes.jsonl');
    const program =
      'import builtins, sys, torch\nprint(torch.calls, getattr(builtins, "OWN_SITECUSTOMIZE", False), any(p.endswith("/shim") for p in sys.path))';
    const r = spawnSync('python3', ['-c', program], {
      env: {
        ...process.env,
        PYTHONPATH: [join(dir, 'shim'), join(dir, 'lib'), join(dir, 'own')].join(':'),
        GPU_WORKBENCH_SNAPSHOT: join(dir, 's.pickle'),
        GPU_WORKBENCH_SHIM_NOTES: notes,
      },
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), "[('history', 100000), 'observer'] True False");
    assert.match(readFileSync(notes, 'utf8'), /"kind": "armed"/);
    const without = spawnSync('python3', ['-c', 'print("fine")'], {
      env: { ...process.env, PYTHONPATH: join(dir, 'shim'), GPU_WORKBENCH_SHIM_NOTES: notes },
      encoding: 'utf8',
    });
    assert.equal(without.stdout.trim(), 'fine', 'a program that never imports torch runs as it is');
  },
);

test('a sanitizer step streams what the program and the tool print as it comes, as the program’s own run does', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'diagnose-sanitize-stream-'));
  const { tool } = sanitizerStandIn(dir, 'memcheck-oob', 99);
  const before = process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'];
  process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'] = tool;
  const byStep = new Map<number, string>();
  const kinds = new Map<number, string>();
  try {
    const report = await diagnoseProgram({
      argv: [node, '-e', 'console.log("clean")'],
      cwd: dir,
      thorough: true,
      budgetMs: 60_000,
      onEvent: (e) => {
        if (e.kind === 'step-started') kinds.set(e.index, e.step.kind);
        if (e.kind === 'output') byStep.set(e.index, (byStep.get(e.index) ?? '') + e.text);
      },
    });
    const memcheck = [...kinds].find(([, k]) => k === 'memcheck')![0];
    assert.match(byStep.get(memcheck) ?? '', /========= Invalid __global__ write of size 4 bytes/);
    assert.equal(report.steps.find((s) => s.kind === 'memcheck')?.status, 'done');
  } finally {
    if (before === undefined) delete process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'];
    else process.env['GPU_WORKBENCH_COMPUTE_SANITIZER'] = before;
  }
});
