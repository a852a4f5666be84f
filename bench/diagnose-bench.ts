import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { DEFAULT_SANITIZER_OPTIONS, sanitizerArguments } from '../core/sanitizer/sanitizer-args';
import type { DiagnosisReport } from '../core/diagnose/report';
import { diagnoseProgram } from '../main/diagnose/diagnose-service';
import { projectRoot } from '../main/paths';
import { locateComputeSanitizer } from '../main/tools/compute-sanitizer';
import SHIM from '../main/diagnose/python/sitecustomize.py';
import { monitorWhileRunning } from '../main/diagnose/monitor-run';
import { runProgramOnce } from '../main/diagnose/program-process';
import { openNvmlSource } from '../main/memory/nvml-source';
import { DescendantWatcher } from '../main/memory/descendant-watcher';
import { ProcReader } from '../main/memory/proc-reader';

/**
 * `npm run bench:diagnose` (GPU machine): what `diagnose` costs beside running the same steps by hand, and how soon
 * the program's output reaches the screen.
 *
 * 1. Overhead (argv: rounds, then optionally the samples to time). For program samples whose diagnosis takes several steps, the whole diagnosis (a new CLI process:
 *    environment, the monitored run, the re-runs, the report) against the same steps typed by hand one after the
 *    other — `nvidia-smi` for the environment, then each run as the report lists it (its env changes, the same
 *    compute-sanitizer options) — alternating one for one, in an order that turns each round, because these machines'
 *    speed drifts. Target ≤ 5% more.
 * 3. What watching costs (only with GPU_WORKBENCH_BENCH_WATCH=1, or alone with GPU_WORKBENCH_BENCH_WATCH_ONLY=1): the
 *    program's run as it is, by hand, started by the workbench, started and watched, and watched by each part of the
 *    watch alone.
 * 2. Latency. A program prints a line stamped with the wall clock every 50 ms; the time from the stamp to the line
 *    arriving (through the service's output events, and through the CLI's standard output to a reader). Target
 *    < 100 ms.
 */
const ROUNDS = Number(process.argv[2] ?? 3);
/** Only the samples named here, comma-separated (`node dist/bench/diagnose-bench.js 5 pytorch-oom-too-large`): a rerun of one row. */
const ONLY = process.argv[3]?.split(',') ?? null;
const root = projectRoot();
const cli = join(root, 'dist/main/cli.js');
const sanitizer = locateComputeSanitizer().path;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

function time(command: string, args: string[], env: NodeJS.ProcessEnv = process.env, cwd = root): number {
  const started = performance.now();
  const r = spawnSync(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 600_000, maxBuffer: 256 * 2 ** 20 });
  if (r.error) throw r.error;
  return performance.now() - started;
}

/** The history re-run's shim, written where a person would put it (the report's own folder was private, and is gone). */
function handEnv(changes: Record<string, string>, dir: string): Record<string, string> {
  if (!changes['GPU_WORKBENCH_SNAPSHOT']) return changes;
  mkdirSync(join(dir, 'shim'), { recursive: true });
  writeFileSync(join(dir, 'shim', 'sitecustomize.py'), SHIM);
  return { PYTHONPATH: join(dir, 'shim'), GPU_WORKBENCH_SNAPSHOT: join(dir, 'snapshot.pickle'), GPU_WORKBENCH_SHIM_NOTES: join(dir, 'notes.jsonl') };
}

/** The steps a report lists, run by hand: nvidia-smi, then each run with its env changes; each step's time. */
function byHand(report: DiagnosisReport, cwd: string, xmlDir: string): number[] {
  return report.steps.map((step) => {
    if (step.kind === 'environment') return time('nvidia-smi', ['--query-gpu=index,name,memory.used,memory.total,driver_version', '--format=csv']);
    if (step.status !== 'done') return 0;
    const env = { ...process.env, ...handEnv(step.envChanges, xmlDir) };
    if (step.kind === 'memcheck' || step.kind === 'racecheck' || step.kind === 'initcheck') {
      const options = { ...DEFAULT_SANITIZER_OPTIONS, tool: step.kind, printLimit: 1000, leakCheck: step.kind === 'memcheck' };
      return time(sanitizer!, [...sanitizerArguments(options, join(xmlDir, 'hand-%p.xml')), ...report.program.argv], env, cwd);
    }
    return time(step.argv[0]!, step.argv.slice(1), env, cwd);
  });
}

function diagnoseCli(name: string, thorough: boolean): { ms: number; report: DiagnosisReport } {
  const started = performance.now();
  const cwd = join(root, 'samples/programs', name);
  const script = spawnSync('ls', [cwd])
    .stdout.toString()
    .split('\n')
    .find((f) => f.endsWith('.py'))!;
  const r = spawnSync(process.execPath, [cli, 'diagnose', '--json', '--cwd', cwd, ...(thorough ? ['--thorough'] : []), '--', 'python3', script], {
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 256 * 2 ** 20,
    timeout: 900_000,
  });
  return { ms: performance.now() - started, report: JSON.parse(r.stdout.toString()) as DiagnosisReport };
}

/** The same diagnosis through the service in this process: what the UI's Diagnose costs in a host already running. */
async function diagnoseInHost(name: string, thorough: boolean): Promise<{ ms: number; report: DiagnosisReport }> {
  const cwd = join(root, 'samples/programs', name);
  const script = spawnSync('ls', [cwd])
    .stdout.toString()
    .split('\n')
    .find((f) => f.endsWith('.py'))!;
  const started = performance.now();
  const report = await diagnoseProgram({ argv: ['python3', script], cwd, thorough, budgetMs: 900_000 });
  return { ms: performance.now() - started, report };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const over = (x: number, h: number) => `${(x / 1000).toFixed(2)} s (${x >= h ? '+' : ''}${(((x - h) / h) * 100).toFixed(1)}%)`;

interface Round {
  hand: number[];
  inHost: { ms: number; steps: number[] };
  cli: { ms: number; reportMs: number; steps: number[] };
}

/** Each step beside its by-hand counterpart (medians over rounds), and what is outside the steps: where any overhead is. */
function breakdown(kinds: string[], rounds: Round[]): string {
  const parts = kinds.map((kind, i) => {
    const d = median(rounds.map((r) => r.inHost.steps[i] ?? 0));
    const c = median(rounds.map((r) => r.cli.steps[i] ?? 0));
    const h = median(rounds.map((r) => r.hand[i] ?? 0));
    return `${kind} ${d.toFixed(0)}/${c.toFixed(0)}/${h.toFixed(0)}`;
  });
  const between = median(rounds.map((r) => r.inHost.ms - sum(r.inHost.steps)));
  const cliBetween = median(rounds.map((r) => r.cli.reportMs - sum(r.cli.steps)));
  const cliOutside = median(rounds.map((r) => r.cli.ms - r.cli.reportMs));
  return `  steps, in the host/in the CLI/by hand (ms): ${parts.join(', ')}; between steps ${between.toFixed(0)} in the host, ${cliBetween.toFixed(0)} in the CLI; the CLI's start and exit ${cliOutside.toFixed(0)}`;
}

const WAYS = ['cli', 'hand', 'host'] as const;

async function overhead(): Promise<void> {
  const cases = [
    { name: 'pytorch-device-assert', thorough: false },
    { name: 'ctypes-segfault', thorough: false },
    { name: 'pytorch-oom-too-large', thorough: false },
    { name: 'cupy-race', thorough: true },
  ].filter((c) => !ONLY || ONLY.includes(c.name));
  if (ONLY && cases.length !== ONLY.length) throw new Error(`unknown sample in ${ONLY.join(', ')}`);
  const xmlDir = mkdtempSync(join(tmpdir(), 'diagnose-bench-'));
  console.log(`\n1. The whole diagnosis against the same steps by hand (${ROUNDS} rounds, alternating; twice as many for a diagnosis under 5 s)`);
  console.log('case | steps | by hand (median) | in the running host (the UI’s path) | a new CLI process');
  for (const c of cases) {
    const rounds: Round[] = [];
    let kinds: string[] = [];
    // A diagnosis first, not timed: the steps the hand will run, and every cache warm for all three ways alike.
    let steps = diagnoseCli(c.name, c.thorough).report;
    // Whole cycles of the three orders, so that no way goes first more often than another.
    const wanted = () => (median(rounds.map((r) => sum(r.hand))) < 5_000 ? 2 * ROUNDS : ROUNDS);
    for (let i = 0; i < ROUNDS || i < wanted() || i % WAYS.length; i++) {
      // Each round runs the three ways in another order (a cycle of three): whichever went first in every round
      // would pay for it every round. By hand, a person runs the steps the last report listed.
      const done: { cli?: { ms: number; report: DiagnosisReport }; hand?: number[]; inHost?: { ms: number; report: DiagnosisReport } } = {};
      for (const way of WAYS.map((_, k) => WAYS[(k + i) % WAYS.length]!)) {
        if (way === 'cli') done.cli = diagnoseCli(c.name, c.thorough);
        else if (way === 'hand') done.hand = byHand(done.cli?.report ?? steps, join(root, 'samples/programs', c.name), xmlDir);
        else done.inHost = await diagnoseInHost(c.name, c.thorough);
      }
      const { cli: d, hand, inHost } = done as Required<typeof done>;
      kinds = d.report.steps.map((s) => s.kind);
      steps = d.report;
      rounds.push({
        hand,
        inHost: { ms: inHost.ms, steps: inHost.report.steps.map((s) => s.durationMs ?? 0) },
        cli: { ms: d.ms, reportMs: d.report.durationMs, steps: d.report.steps.map((s) => s.durationMs ?? 0) },
      });
    }
    const h = median(rounds.map((r) => sum(r.hand)));
    console.log(
      `${c.name} | ${kinds.join('+')} | ${(h / 1000).toFixed(2)} s | ${over(median(rounds.map((r) => r.inHost.ms)), h)} | ${over(median(rounds.map((r) => r.cli.ms)), h)}`,
    );
    console.log(breakdown(kinds, rounds));
    console.log(spread(kinds, rounds));
  }
}

/**
 * How much the rounds themselves move: the hand's own totals from fastest to slowest, and each round's host and CLI
 * against that round's hand, with the median of those paired figures. A median difference smaller than this spread
 * is not a measured overhead; what the workbench adds whatever the program does is its time outside the program's own
 * runs (its environment step, the gaps, a CLI's start and exit), set against the hand's `nvidia-smi`.
 */
function spread(kinds: string[], rounds: Round[]): string {
  const hands = rounds.map((r) => sum(r.hand));
  const ratio = (x: number, h: number) => ((x - h) / h) * 100;
  const pctOf = (p: number, digits = 0) => `${p >= 0 ? '+' : '−'}${Math.abs(p).toFixed(digits)}%`;
  const middle = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const hostPaired = rounds.map((r, i) => ratio(r.inHost.ms, hands[i]!));
  const cliPaired = rounds.map((r, i) => ratio(r.cli.ms, hands[i]!));
  const env = kinds.indexOf('environment');
  const runs = (steps: number[]) => sum(steps.filter((_, i) => i !== env));
  const outside = (pick: (r: Round) => { ms: number; steps: number[] }) => middle(rounds.map((r) => pick(r).ms - runs(pick(r).steps)));
  const handOutside = middle(rounds.map((r) => (env >= 0 ? (r.hand[env] ?? 0) : 0)));
  const h = middle(hands);
  const own = (ms: number) => `${ms.toFixed(0)} ms (${pctOf(ratio(h + ms - handOutside, h), 1)})`;
  return [
    `  rounds: by hand ${(Math.min(...hands) / 1000).toFixed(2)}-${(Math.max(...hands) / 1000).toFixed(2)} s; each round's host ${hostPaired.map((p) => pctOf(p)).join(' ')}, CLI ${cliPaired.map((p) => pctOf(p)).join(' ')}`,
    `  paired (each round against its own hand), median: host ${pctOf(middle(hostPaired), 1)}, CLI ${pctOf(middle(cliPaired), 1)}`,
    `  outside the program's runs: by hand ${handOutside.toFixed(0)} ms (nvidia-smi), the host ${own(outside((r) => r.inHost))}, the CLI ${own(outside((r) => r.cli))}`,
  ].join('\n');
}

/** The wall clock in ns with sub-millisecond steps (Date.now() moves by whole milliseconds). */
const nowNs = () => (performance.timeOrigin + performance.now()) * 1e6;
const STAMPER = 'import time, sys\nfor i in range(40):\n    print(f"{time.time_ns()}", flush=True)\n    time.sleep(0.05)\n';

async function latency(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'diagnose-latency-'));
  writeFileSync(join(dir, 'stamp.py'), STAMPER);
  const viaService: number[] = [];
  await diagnoseProgram({
    argv: ['python3', 'stamp.py'],
    cwd: dir,
    budgetMs: 120_000,
    onEvent: (e) => {
      if (e.kind !== 'output') return;
      const now = nowNs();
      for (const line of e.text.split('\n').filter((l) => /^\d{19}$/.test(l))) viaService.push((now - Number(line)) / 1e6);
    },
  });
  const viaCli = await new Promise<number[]>((resolve) => {
    const delays: number[] = [];
    const child = spawn(process.execPath, [cli, 'diagnose', '--cwd', dir, '--', 'python3', 'stamp.py'], { stdio: ['ignore', 'pipe', 'ignore'] });
    child.stdout.on('data', (chunk: Buffer) => {
      const now = nowNs();
      for (const line of chunk
        .toString()
        .split('\n')
        .filter((l) => /^\d{19}$/.test(l)))
        delays.push((now - Number(line)) / 1e6);
    });
    child.on('close', () => resolve(delays));
  });
  console.log('\n2. From the program writing a line to the line arriving (ms)');
  for (const [name, xs] of [
    ['through the service (the UI’s path)', viaService],
    ['through the CLI’s standard output', viaCli],
  ] as const)
    console.log(`${name}: ${xs.length} lines, median ${median(xs).toFixed(2)}, p95 ${pct(xs, 0.95).toFixed(2)}, max ${Math.max(...xs).toFixed(2)}`);
}

/**
 * NODE_EXTRA_CA_CERTS makes Node 20 read and parse that file's certificates at every start, before any of the
 * CLI's code runs (64–78 ms on the H200 hosts, which set it: `node -e 0` took 100–118 ms against 34–40). The CLI opens no TLS
 * connection; the setting is the machine's, a tax on every Node program there. The bench says what it costs, then
 * times the CLI as a Node without it starts, unless GPU_WORKBENCH_BENCH_KEEP_CA=1. Nothing else is run with it either:
 * the by-hand steps are the same programs, in the same environment.
 */
function setCertificatesAside(): void {
  const file = process.env['NODE_EXTRA_CA_CERTS'];
  if (!file) return;
  const startMs = (env: NodeJS.ProcessEnv) => median(Array.from({ length: 9 }, () => time(process.execPath, ['-e', '0'], env)));
  const withIt = startMs(process.env);
  const { NODE_EXTRA_CA_CERTS: _, ...without } = process.env;
  const withoutIt = startMs(without);
  const keep = !!process.env['GPU_WORKBENCH_BENCH_KEEP_CA'];
  console.log(
    `NODE_EXTRA_CA_CERTS=${file} is set here: \`node -e 0\` takes ${withIt.toFixed(1)} ms with it, ${withoutIt.toFixed(1)} ms without (+${(withIt - withoutIt).toFixed(1)} ms at every Node start). ` +
      (keep
        ? 'Kept (GPU_WORKBENCH_BENCH_KEEP_CA=1): the CLI rows below pay it.'
        : 'Set aside for this bench, as on a machine without it (GPU_WORKBENCH_BENCH_KEEP_CA=1 keeps it).'),
  );
  if (!keep) delete process.env['NODE_EXTRA_CA_CERTS'];
}

async function main(): Promise<void> {
  setCertificatesAside();
  if (process.env['GPU_WORKBENCH_BENCH_CLI_ONLY']) return cliPhases();
  if (process.env['GPU_WORKBENCH_BENCH_FIRST_RUN_ONLY']) return firstRunCost();
  if (!sanitizer) {
    console.error('✗ compute-sanitizer was not found: this benchmark needs it (and a GPU).');
    process.exit(2);
  }
  if (process.env['GPU_WORKBENCH_BENCH_WATCH_ONLY']) return watchCost();
  await cliPhases();
  await latency();
  await overhead();
  if (process.env['GPU_WORKBENCH_BENCH_WATCH']) await watchCost();
}

/** Loaded with --require into a CLI under test: when Node had started, and when the process was about to exit. */
const PHASES_PRELOAD = `const { writeFileSync } = require('node:fs');
const ready = performance.now();
process.once('exit', () => writeFileSync(process.env.BENCH_PHASES_FILE, JSON.stringify({ origin: performance.timeOrigin, ready, exit: performance.now() })));
`;

/**
 * 4. A new CLI process's own time, on a program that does nothing (\`true\`), ten times: wall time from spawn to reaped,
 *    split into Node's own start (until a --require'd file runs), loading the bundle and starting the diagnosis, the
 *    diagnosis itself (its report's start and duration), what follows it until the 'exit' event, and the process's
 *    teardown after that (the kernel closing its files: NVML's and the driver's). Beside it, \`node -e 0\`.
 */
async function cliPhases(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'diagnose-cli-phases-'));
  const preload = join(dir, 'phases.cjs');
  writeFileSync(preload, PHASES_PRELOAD);
  const phasesFile = join(dir, 'phases.json');
  const rows: Record<string, number[]> = {
    wall: [],
    'node -e 0': [],
    'Node start': [],
    'bundle and set-up': [],
    diagnosis: [],
    'after the report': [],
    teardown: [],
  };
  for (let i = 0; i < 10; i++) {
    rows['node -e 0']!.push(time(process.execPath, ['-e', '0']));
    const spawnedAt = performance.timeOrigin + performance.now();
    const r = spawnSync(process.execPath, ['--require', preload, cli, 'diagnose', '--json', '--', 'true'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, BENCH_PHASES_FILE: phasesFile },
      timeout: 60_000,
    });
    const reapedAt = performance.timeOrigin + performance.now();
    const report = JSON.parse(r.stdout.toString()) as DiagnosisReport;
    const p = JSON.parse(readFileSync(phasesFile, 'utf8')) as { origin: number; ready: number; exit: number };
    const reportStart = Date.parse(report.startedAt) - p.origin;
    rows['wall']!.push(reapedAt - spawnedAt);
    rows['Node start']!.push(p.origin + p.ready - spawnedAt);
    rows['bundle and set-up']!.push(reportStart - p.ready);
    rows['diagnosis']!.push(report.durationMs);
    rows['after the report']!.push(p.exit - reportStart - report.durationMs);
    rows['teardown']!.push(reapedAt - (p.origin + p.exit));
  }
  console.log(`\n4. A new CLI process diagnosing \`true\` (ms, medians of 10; the report's start is whole milliseconds)`);
  console.log(
    Object.entries(rows)
      .map(([name, xs]) => `${name} ${median(xs).toFixed(1)}`)
      .join(' | '),
  );
}

/**
 * 3. What watching costs the program: its run as it is, by hand, started by the workbench unwatched, and started and
 *    watched as the diagnosis's first step is (NVML open already, as in a running host), alternating. Then the watch's
 *    parts alone, to find the one that costs: NVML's sampling thread (memory every 50 ms, the processes every other
 *    sample, drained four times a second as a session does), the same with memory only, and the /proc walk of the
 *    program's descendants (every DESCENDANT_WATCH_MS).
 */
async function watchCost(): Promise<void> {
  const nvml = await openNvmlSource();
  type Watch = (pid: number) => () => void;
  const nvmlThread =
    (processEvery: number, intervalMs = 50): Watch =>
    () => {
      const thread = nvml.startThread(intervalMs, processEvery);
      const drain = setInterval(() => thread.take(), 250);
      return () => {
        clearInterval(drain);
        thread.stop();
      };
    };
  const descendants =
    (periodMs?: number): Watch =>
    (pid) => {
      const watcher = new DescendantWatcher(pid, new ProcReader(), { periodMs }).start();
      return () => watcher.stop();
    };
  const ways: [string, Watch | 'diagnosis' | null][] = [
    ['started by the workbench', null],
    ['watched as the diagnosis does', 'diagnosis'],
    ['NVML: memory and processes', nvmlThread(2)],
    ['NVML: memory only', nvmlThread(0)],
    ['NVML: memory only, every 250 ms', nvmlThread(0, 250)],
    ['/proc: descendants only', descendants()],
    ['/proc: descendants only, every 250 ms', descendants(250)],
  ];
  console.log(`\n3. The program run as it is (ms, medians of ${ROUNDS * 2}): by hand | ${ways.map(([name]) => name).join(' | ')}`);
  for (const name of ['pytorch-oom-too-large', 'pytorch-device-assert', 'ctypes-leak']) {
    const cwd = join(root, 'samples/programs', name);
    const argv = (JSON.parse(readFileSync(join(cwd, 'diagnose.json'), 'utf8')) as { command: string[] }).command;
    const once = async (way: Watch | 'diagnosis' | null) => {
      const monitor = way === 'diagnosis' ? monitorWhileRunning(nvml) : null;
      const watching: { stop?: () => void } = {};
      const r = await runProgramOnce({
        argv,
        cwd,
        env: process.env,
        timeoutMs: 600_000,
        onStart: (pid) => {
          monitor?.follow(pid);
          if (typeof way === 'function') watching.stop = way(pid);
        },
      });
      watching.stop?.();
      monitor?.stop();
      await monitor?.finish();
      return r.durationMs;
    };
    const hand: number[] = [];
    const times = ways.map((): number[] => []);
    for (let i = 0; i < ROUNDS * 2; i++) {
      hand.push(time(argv[0]!, argv.slice(1), process.env, cwd));
      for (const [w, [, way]] of ways.entries()) times[w]!.push(await once(way));
    }
    console.log(`${name}: ${[hand, ...times].map((xs) => median(xs).toFixed(0)).join(' | ')}`);
  }
}

/** A program that times its own phases: Python's start to its first line, the walk of site-packages, libcudart's load, CUDA's start. */
const PHASES_PY = `import time
t0 = time.time()
import ctypes, glob, json, os, site
roots = site.getsitepackages() + [site.getusersitepackages(), "/usr/local/cuda/lib64"]
paths = sorted(p for r in roots for p in glob.glob(os.path.join(r, "**", "libcudart.so*"), recursive=True))
t1 = time.time()
cudart = ctypes.CDLL(paths[-1])
t2 = time.time()
cudart.cudaFree(ctypes.c_void_p(0))
t3 = time.time()
print("PHASES " + json.dumps({"start": t0 * 1000, "walk": (t1 - t0) * 1000, "load": (t2 - t1) * 1000, "cuda": (t3 - t2) * 1000, "end": t3 * 1000}))
`;

/**
 * 5. Why a new CLI's first run is slower than the host's (only with GPU_WORKBENCH_BENCH_FIRST_RUN_ONLY=1): a program
 *    that times its own phases, run by hand, in this host's diagnosis and in a new CLI's, alternating; for each, the
 *    run's duration as the report gives it, and the program's own phases (wall-clock stamps: from the spawn to its
 *    first line, the walk, the load, CUDA's start, and from its last line to the exit being seen).
 */
async function firstRunCost(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'diagnose-first-run-'));
  writeFileSync(join(dir, 'phases.py'), PHASES_PY);
  type Phases = { start: number; walk: number; load: number; cuda: number; end: number };
  const phasesOf = (output: string): Phases | null => {
    const line = output.split('\n').find((l) => l.startsWith('PHASES '));
    return line ? (JSON.parse(line.slice(7)) as Phases) : null;
  };
  const rows: Record<string, Record<string, number[]>> = {};
  const add = (way: string, name: string, v: number) => ((rows[way] ??= {})[name] ??= []).push(v);
  const record = (way: string, spawnedAt: number, durationMs: number, output: string) => {
    const p = phasesOf(output);
    add(way, 'run', durationMs);
    if (!p) return;
    add(way, 'to first line', p.start - spawnedAt);
    add(way, 'walk', p.walk);
    add(way, 'load', p.load);
    add(way, 'cuda', p.cuda);
    add(way, 'after last line', spawnedAt + durationMs - p.end);
  };
  const wall = () => performance.timeOrigin + performance.now();
  const profDir = process.env['GPU_WORKBENCH_BENCH_PROFILE_DIR'];
  for (let i = 0; i < ROUNDS * 2; i++) {
    let at = wall();
    const hand = spawnSync('python3', ['phases.py'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    record('by hand', at, wall() - at, hand.stdout.toString());

    at = wall();
    const inHost = await diagnoseProgram({ argv: ['python3', 'phases.py'], cwd: dir, budgetMs: 120_000 });
    const hostRun = inHost.evidence.runs[0]!;
    record('host', Date.parse(inHost.startedAt) + inHost.steps[0]!.durationMs! + 0, hostRun.durationMs, hostRun.output);

    const profile = profDir && i === 0 ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [];
    const r = spawnSync(process.execPath, [...profile, cli, 'diagnose', '--json', '--cwd', dir, '--', 'python3', 'phases.py'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 64 * 2 ** 20,
    });
    const report = JSON.parse(r.stdout.toString()) as DiagnosisReport;
    const cliRun = report.evidence.runs[0]!;
    record('CLI', Date.parse(report.startedAt) + report.steps[0]!.durationMs!, cliRun.durationMs, cliRun.output);
    add('CLI', 'environment step', report.steps[0]!.durationMs!);
    add('host', 'environment step', inHost.steps[0]!.durationMs!);
  }
  console.log(`\n5. The first run's phases (ms, medians of ${ROUNDS * 2}; the spawn is estimated as the report's start plus its environment step)`);
  for (const [way, named] of Object.entries(rows))
    console.log(
      `${way}: ${Object.entries(named)
        .map(([name, xs]) => `${name} ${median(xs).toFixed(1)} [${Math.min(...xs).toFixed(0)}-${Math.max(...xs).toFixed(0)}]`)
        .join(', ')}`,
    );
}

void main();
