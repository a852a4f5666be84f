import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { FuzzReport } from '../fuzz/fuzz-child';
import { ROOT } from '../helpers/cli';
import { MiB, samplePeaks } from '../helpers/peak-rss';

// Issue 25: a mutation fuzz of each reader of files from outside — bundles, snapshot pickles, sanitizer XML, run
// results — of 10,000 cases each from the real fixtures, with a fixed seed (printed; GPU_WORKBENCH_FUZZ_SEED picks
// another). Each reader's cases run in one process under a 1 GiB heap and a 2 GiB data limit, as a reader process
// does, so a fatal V8 error fails the test instead of ending the runner. Every case must end in the reader's answer or
// its own refusal, within 10 s, and the process under 1.5 GiB.
const SEED = Number(process.env['GPU_WORKBENCH_FUZZ_SEED'] ?? 25);
const CASES = 10_000;
const MAX_CASE_MS = 10_000;
const MAX_PEAK = 1.5 * 2 ** 30;
const work = mkdtempSync(join(tmpdir(), 'wb-reader-fuzz-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** The reader's fuzz in a process of its own, its peak memory sampled from outside too. */
function fuzz(reader: string, dir: string): Promise<{ report: FuzzReport | null; code: number | null; stderr: string; peak: number }> {
  const child = spawn(
    '/bin/sh',
    [
      '-c',
      'ulimit -d 2097152 && exec "$@"',
      'fuzz',
      process.execPath,
      '--max-old-space-size=1024',
      join(ROOT, 'dist/test/fuzz/fuzz-child.js'),
      reader,
      String(SEED),
      String(CASES),
      dir,
    ],
    { cwd: ROOT, env: { ...process.env, GPU_WORKBENCH_STATE_DIR: join(dir, 'state') }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const stop = samplePeaks(child.pid!, 50);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      const { host } = stop();
      let report: FuzzReport | null = null;
      try {
        report = JSON.parse(stdout) as FuzzReport;
      } catch {
        // No report: the process died; its exit and its output say how.
      }
      resolve({ report, code, stderr, peak: Math.max(host, report?.peakRss ?? 0) });
    }),
  );
}

for (const reader of ['bundle', 'pickle', 'xml', 'result']) {
  test(
    `the ${reader} reader: ${CASES.toLocaleString('en')} mutated inputs, each read or refused by the reader, within 10 s and 1.5 GiB`,
    { timeout: 300_000 },
    async () => {
      const dir = mkdtempSync(join(work, `${reader}-`));
      const { report, code, stderr, peak } = await fuzz(reader, dir);
      assert.ok(report, `the ${reader} fuzz ended without a report (exit ${code}):\n${stderr.slice(-4000)}`);
      const refused = Object.entries(report.outcomes).filter(([outcome]) => !outcome.startsWith('accepted'));
      console.log(
        `# ${reader}: seed ${SEED}, ${report.cases} cases in ${(report.totalMs / 1000).toFixed(1)} s; ` +
          `${report.cases - refused.reduce((n, [, k]) => n + k, 0) - report.unexpectedCount} accepted, ${refused.reduce((n, [, k]) => n + k, 0)} refused (or, XML, read with a problem), ` +
          `${report.unexpectedCount} unexpected; slowest case ${report.slowestCase} (${report.maxCaseMs.toFixed(0)} ms); peak RSS ${(peak / MiB).toFixed(0)} MiB`,
      );
      console.log(`#   ${JSON.stringify(report.outcomes)}`);
      const again = (n: number) => `node dist/test/fuzz/fuzz-child.js ${reader} ${SEED} 1 <folder> ${n}`;
      assert.deepEqual(
        report.unexpected.map((u) => `case ${u.case} (${u.bytes} bytes; again: ${again(u.case)}): ${u.error}`),
        [],
        `${report.unexpectedCount} unexpected errors`,
      );
      assert.equal(code, 0, stderr.slice(-4000));
      assert.equal(report.cases, CASES);
      assert.ok(report.maxCaseMs < MAX_CASE_MS, `case ${report.slowestCase} took ${report.maxCaseMs.toFixed(0)} ms (again: ${again(report.slowestCase)})`);
      assert.ok(peak < MAX_PEAK, `the fuzz of the ${reader} reader peaked at ${(peak / MiB).toFixed(0)} MiB`);
    },
  );
}
