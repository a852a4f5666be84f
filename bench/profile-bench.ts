import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { ncuArguments } from '../core/kernel-profile/ncu-args';
import { forkLauncher } from '../main/process/launcher';
import { projectRoot } from '../main/paths';
import { deviceInfos } from '../main/services/device-service';
import { profilePlan } from '../main/services/kernel-profile-service';
import { loadSample } from '../main/services/sample-service';
import { createWorkbench } from '../main/workbench';
import { buildReference, requireNcu } from '../test/helpers/profile-reference';

/**
 * `npm run bench:profile` (GPU machine, with ncu): profiling a launch through the workbench against bare `ncu` on
 * the same launch with the same sections, from a plain program (bench/raw/profile_ref.cu). Bare: ncu printing its
 * details page (what a person reads), and ncu writing a report whose raw and source pages are then printed (what
 * the workbench reads). The workbench: the running host's service (the UI's Profile) and a new CLI process
 * (`gpu-workbench profile --sample … --json`), which also compile the kernel and start a runner under the tool.
 * Alternating, medians. Target: ≤ 10% more than bare ncu.
 */
const ROUNDS = Number(process.argv[2] ?? 3);
const root = projectRoot();
const ncu = requireNcu();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const wall = (command: string, args: string[]): number => {
  const started = performance.now();
  const r = spawnSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000, maxBuffer: 256 * 2 ** 20 });
  if (r.error || r.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${r.error?.message ?? r.stderr.toString().slice(-500)}`);
  return performance.now() - started;
};
const pct = (ours: number, bare: number) => `${ours >= bare ? '+' : ''}${((100 * (ours - bare)) / bare).toFixed(1)}%`;

async function main(): Promise<void> {
  const devices = await deviceInfos();
  const device = devices.ok ? devices.devices[0]! : null;
  const workbench = createWorkbench(forkLauncher, { warmSpare: false });
  const rows: string[] = [];
  try {
    for (const variant of ['broken', 'fixed'] as const) {
      const ref = buildReference(variant);
      const sample = await loadSample('uncoalesced-access', variant);
      const report = join(ref.binary + '-report');
      const workbenchArgs = ncuArguments('transpose', 0, report, `${report}.log`);
      // Bare: the same launch, sections and metrics; printing the details page, or writing a report.
      const printed = workbenchArgs.slice(0, workbenchArgs.indexOf('--import-source'));
      const bareArgs = [...printed, '--force-overwrite', '--export', report];
      const t = {
        details: [] as number[],
        pages: [] as number[],
        host: [] as number[],
        cli: [] as number[],
        underTool: [] as number[],
        report: [] as number[],
      };
      for (let round = 0; round < ROUNDS; round++) {
        t.details.push(wall(ncu, [...printed, ref.binary, ...ref.args]));
        t.pages.push(
          wall(ncu, [...bareArgs, ref.binary, ...ref.args]) +
            Math.max(
              wall(ncu, ['--import', `${report}.ncu-rep`, '--csv', '--page', 'raw']),
              wall(ncu, ['--import', `${report}.ncu-rep`, '--csv', '--page', 'source', '--print-source', 'cuda,sass']),
            ),
        );
        const started = performance.now();
        const answer = await profilePlan({ plan: sample.plan, planPath: sample.planPath, device }, workbench);
        if (!answer.profile?.counters) throw new Error(`no counters: ${answer.outcome.diagnosis.headline} ${JSON.stringify(answer.profile?.noCounters)}`);
        t.host.push(performance.now() - started);
        t.underTool.push(answer.timings?.underToolMs ?? NaN);
        t.report.push(answer.timings?.reportMs ?? NaN);
        t.cli.push(
          wall(process.execPath, [
            join(root, 'dist/main/cli.js'),
            'profile',
            '--sample',
            'uncoalesced-access',
            ...(variant === 'fixed' ? ['--fixed'] : []),
            '--json',
          ]),
        );
      }
      const bare = median(t.details);
      rows.push(
        `${variant} transpose | ${(bare / 1000).toFixed(2)} s | ${(median(t.pages) / 1000).toFixed(2)} s | ${(median(t.host) / 1000).toFixed(2)} s (${pct(median(t.host), bare)}) | ${(median(t.cli) / 1000).toFixed(2)} s (${pct(median(t.cli), bare)})`,
        `  in the host: the run under ncu ${median(t.underTool).toFixed(0)} ms, the report's pages read ${median(t.report).toFixed(0)} ms`,
      );
    }
  } finally {
    await workbench.dispose();
  }
  console.log(`Profiling one launch: the workbench against bare ncu with the same sections (${ROUNDS} rounds, alternating, medians)`);
  console.log('case | bare ncu (details printed) | bare ncu (report, then its raw and source pages) | the running host (the UI) | a new CLI process');
  for (const row of rows) console.log(row);
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
