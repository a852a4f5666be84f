import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { projectRoot } from '../main/paths';
import { DEFAULT_SANITIZER_OPTIONS, sanitizerArguments } from '../core/sanitizer/sanitizer-args';
import { locateComputeSanitizer } from '../main/tools/compute-sanitizer';
import { sanitizeProgram } from '../main/tools/sanitize-program';

/**
 * `npm run bench:sanitize-overhead` (GPU machine, with compute-sanitizer): what the workbench adds to a
 * sanitizer run. The same program (test/gpu/programs/sanitizer_cases.cu: the off-by-one, and the race) under
 * the bare `compute-sanitizer` command with the options the workbench passes, against `gpu-workbench sanitize
 * -- <program>` (a Node process, the tool, reading and grouping its XML, the JSON answer), and against the same
 * service called in a running host (what the UI's "Sanitize a program" costs). With CuPy there, the CuPy sample
 * too: a Python program is what most users sanitize. Alternating, one for one, because these machines' speed
 * drifts. Target: ≤ 10% more wall time.
 */
const REPEATS = Number(process.argv[2] ?? 7);
const root = projectRoot();
const { path: found } = locateComputeSanitizer();
if (!found) {
  console.error('✗ compute-sanitizer was not found: this benchmark needs it (and a GPU).');
  process.exit(2);
}
const sanitizer: string = found;
const dir = mkdtempSync(join(tmpdir(), 'gpu-workbench-sanitize-bench-'));
const program = join(dir, 'cases');
execFileSync('nvcc', ['-lineinfo', '-o', program, join(root, 'test/gpu/programs/sanitizer_cases.cu')], { stdio: 'inherit' });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const wall = (command: string, args: string[]): number => timed(command, args).ms;
const timed = (command: string, args: string[]): { ms: number; stdout: string } => {
  const started = performance.now();
  const r = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'ignore'], timeout: 300_000, maxBuffer: 64 * 2 ** 20 });
  if (r.error) throw r.error;
  return { ms: performance.now() - started, stdout: r.stdout.toString() };
};
const cli = join(root, 'dist/main/cli.js');
const cupy = spawnSync('python3', ['-c', 'import cupy; cupy.cuda.runtime.getDeviceCount()'], { stdio: 'ignore', timeout: 60_000 }).status === 0;
/** The parts of the workbench's extra time, measured alone: Node starting, the CLI loading, the tool's --version. */
const parts = { node: [] as number[], cliLoad: [] as number[], version: [] as number[], inside: [] as number[] };

async function measure(): Promise<{ name: string; bare: number; workbench: number; inHost: number }[]> {
  const rows: { name: string; bare: number; workbench: number; inHost: number }[] = [];
  /** The bare command line the workbench runs, for one program. */
  const bareArgs = (tool: 'memcheck' | 'racecheck', command: string[]) => [
    ...sanitizerArguments({ ...DEFAULT_SANITIZER_OPTIONS, tool }, join(dir, 'bare-%p.xml')),
    ...command,
  ];
  const programs: { name: string; tool: 'memcheck' | 'racecheck'; command: string[]; repeats: number }[] = [
    { name: 'memcheck, the oob case (C++)', tool: 'memcheck', command: [program, 'oob'], repeats: REPEATS },
    { name: 'racecheck, the race case (C++)', tool: 'racecheck', command: [program, 'race'], repeats: REPEATS },
    ...(cupy
      ? [
          {
            name: 'memcheck, the CuPy sample (python3 oob.py)',
            tool: 'memcheck' as const,
            command: ['python3', join(root, 'samples/programs/cupy-out-of-bounds/oob.py')],
            repeats: Math.min(REPEATS, 3),
          },
        ]
      : []),
  ];
  for (const { name, tool, command, repeats } of programs) {
    const bare: number[] = [];
    const workbench: number[] = [];
    const inHost: number[] = [];
    wall(sanitizer, bareArgs(tool, command)); // the first run of a tool pays for loading it: not counted on either side
    for (let i = 0; i < repeats; i++) {
      bare.push(wall(sanitizer, bareArgs(tool, command)));
      const run = timed(process.execPath, [cli, 'sanitize', '--json', '--tool', tool, '--', ...command]);
      workbench.push(run.ms);
      // durationMs: from just before the tool starts to the report ready (the XML read, grouped, judged).
      parts.inside.push((JSON.parse(run.stdout) as { durationMs: number }).durationMs);
      // The UI's path: the host is running already and calls the same service.
      const started = performance.now();
      await sanitizeProgram({ tool, command, cwd: root });
      inHost.push(performance.now() - started);
      parts.node.push(wall(process.execPath, ['-e', '0']));
      parts.cliLoad.push(wall(process.execPath, [cli, 'sanitize', '--help']));
      parts.version.push(wall(sanitizer, ['--version']));
    }
    rows.push({ name, bare: median(bare), workbench: median(workbench), inHost: median(inHost) });
  }
  return rows;
}

void measure().then((rows) => {
  rmSync(dir, { recursive: true, force: true });

  const more = (ms: number, bare: number) => `+${(ms - bare).toFixed(0)} ms (${((ms / bare - 1) * 100).toFixed(1)}%)`;
  console.log(`compute-sanitizer at ${sanitizer}, ${REPEATS} runs each (3 for Python), alternating (medians)${cupy ? '' : '; no CuPy here, so no Python row'}`);
  console.log('| run | bare compute-sanitizer | `gpu-workbench sanitize` (a new Node) | the running workbench (the UI) |');
  console.log('| --- | ---: | ---: | ---: |');
  for (const r of rows)
    console.log(
      `| ${r.name} | ${r.bare.toFixed(0)} ms | ${r.workbench.toFixed(0)} ms, ${more(r.workbench, r.bare)} | ${r.inHost.toFixed(0)} ms, ${more(r.inHost, r.bare)} |`,
    );
  console.log('(target: ≤ 10% more wall time)');
  console.log(
    `Where it goes (medians over all runs): Node starting ${median(parts.node).toFixed(0)} ms; Node with the CLI loaded (sanitize --help) ${median(parts.cliLoad).toFixed(0)} ms; ` +
      `the tool's --version ${median(parts.version).toFixed(0)} ms (asked beside the run); the run as the CLI times it (tool start to report) ${median(parts.inside).toFixed(0)} ms`,
  );
});
