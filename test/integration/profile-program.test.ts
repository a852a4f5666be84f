import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { runCli } from '../helpers/cli';

// `gpu-workbench profile -- <command>` without a GPU: no ncu is said before anything runs; and with a stand-in for
// ncu's process (a script that runs the program after `--`, for the workbench's handling of the tool, not the tool's
// figures) a program that never ends is stopped at the time limit, with nothing of it left running.
const dir = mkdtempSync(join(tmpdir(), 'wb-profile-program-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function ncuStandIn(): string {
  const tool = join(dir, 'ncu');
  writeFileSync(
    tool,
    `#!/bin/bash\nif [ "$1" = --version ]; then echo 'Version 2025.3.1.0 (build 36398880) (public-release)'; exit 0; fi\nwhile [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n`,
  );
  chmodSync(tool, 0o755);
  return tool;
}

/** The pids whose command line names `marker`. */
function processesNaming(marker: string): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) return [];
    try {
      return readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

test('profile -- <command> without ncu: exit 2, what is missing and how to get it, the program never started', async () => {
  const marker = join(dir, `never-started-${process.pid}`);
  const r = await runCli(['profile', '--', 'touch', marker], { env: { PATH: '/usr/bin:/bin', GPU_WORKBENCH_NCU: '' } });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /✗ No hardware counters: Nsight Compute \(ncu\) was not found\. .*CUDA toolkit/);
  assert.throws(() => readFileSync(marker));
});

test('profile -- <command>: a program that never ends is stopped at --timeout, nothing of it left; the report says so', async () => {
  const marker = `sleeper-${process.pid}-${Date.now()}`;
  const script = join(dir, `${marker}.sh`);
  writeFileSync(script, '#!/bin/bash\nsleep 300 &\nwait\n');
  chmodSync(script, 0o755);
  const r = await runCli(['profile', '--timeout', '2', '--json', '--', script], { env: { GPU_WORKBENCH_NCU: ncuStandIn() }, timeoutMs: 30_000 });
  assert.equal(r.code, 1, r.stderr);
  const profile = JSON.parse(r.stdout) as { exit: { timedOut: boolean }; kernels: unknown[]; noCounters: { reason: string } };
  assert.equal(profile.exit.timedOut, true);
  assert.deepEqual(profile.kernels, []);
  assert.equal(profile.noCounters.reason, 'not-profiled');
  await new Promise((done) => setTimeout(done, 500));
  assert.deepEqual(processesNaming(marker), []);
});

test('profile -- with --compare or a bad --kernel expression: refused in words, exit 64', async () => {
  const compare = await runCli(['profile', '--compare', 'x.json', '--', 'true']);
  assert.equal(compare.code, 64);
  assert.match(compare.stderr, /--compare is for one kernel launch/);
  const bad = await runCli(['profile', '--kernel', '(', '--', 'true'], { env: { GPU_WORKBENCH_NCU: ncuStandIn() } });
  assert.equal(bad.code, 64);
  assert.match(bad.stderr, /not one/);
});
