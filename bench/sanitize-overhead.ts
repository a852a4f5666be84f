import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { projectRoot } from '../main/paths';
import { locateComputeSanitizer } from '../main/tools/compute-sanitizer';

/**
 * `npm run bench:sanitize-overhead` (GPU machine, with compute-sanitizer): what the workbench adds to a
 * sanitizer run. The same program (test/gpu/programs/sanitizer_cases.cu: the off-by-one, and the race) under
 * the bare `compute-sanitizer` command with the options the workbench passes, against `gpu-workbench sanitize
 * -- <program>` (a Node process, the tool, reading and grouping its XML, the JSON answer). Alternating, one for
 * one, because these machines' speed drifts. Target: ≤ 10% more wall time.
 */
const REPEATS = Number(process.argv[2] ?? 7);
const root = projectRoot();
const { path: sanitizer } = locateComputeSanitizer();
if (!sanitizer) {
  console.error('✗ compute-sanitizer was not found: this benchmark needs it (and a GPU).');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'gpu-workbench-sanitize-bench-'));
const program = join(dir, 'cases');
execFileSync('nvcc', ['-lineinfo', '-o', program, join(root, 'test/gpu/programs/sanitizer_cases.cu')], { stdio: 'inherit' });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const wall = (command: string, args: string[]): number => {
  const started = performance.now();
  const r = spawnSync(command, args, { stdio: 'ignore', timeout: 300_000 });
  if (r.error) throw r.error;
  return performance.now() - started;
};

const rows: { name: string; bare: number; workbench: number }[] = [];
for (const [tool, which] of [
  ['memcheck', 'oob'],
  ['racecheck', 'race'],
] as const) {
  const bareArgs = [
    '--tool',
    tool,
    ...(tool === 'memcheck' ? ['--leak-check', 'full'] : []),
    '--print-limit',
    '10000',
    '--launch-timeout',
    '60',
    '--error-exitcode',
    '86',
    '--target-processes',
    'all',
    '--xml',
    '--save',
    join(dir, 'bare-%p.xml'),
    program,
    which,
  ];
  const bare: number[] = [];
  const workbench: number[] = [];
  wall(sanitizer, bareArgs); // the first run of a tool pays for loading it: not counted on either side
  for (let i = 0; i < REPEATS; i++) {
    bare.push(wall(sanitizer, bareArgs));
    workbench.push(wall(process.execPath, [join(root, 'dist/main/cli.js'), 'sanitize', '--json', '--tool', tool, '--', program, which]));
  }
  rows.push({ name: `${tool} on the ${which} case`, bare: median(bare), workbench: median(workbench) });
}
rmSync(dir, { recursive: true, force: true });

console.log(`compute-sanitizer at ${sanitizer}, ${REPEATS} runs each, alternating (medians)`);
console.log('| run | workbench | bare compute-sanitizer | difference |');
console.log('| --- | ---: | ---: | ---: |');
for (const r of rows)
  console.log(
    `| ${r.name} | ${r.workbench.toFixed(0)} ms | ${r.bare.toFixed(0)} ms | +${(r.workbench - r.bare).toFixed(0)} ms (${((r.workbench / r.bare - 1) * 100).toFixed(1)}%) |`,
  );
console.log('(target: ≤ 10% more wall time)');
