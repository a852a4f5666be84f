import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { BoundedOutput } from '../../main/tools/bounded-output';
import { importSanitizerReport } from '../../main/tools/sanitize-import';
import { collectReport } from '../../main/tools/sanitize-program';
import { ROOT } from '../helpers/cli';

// A report saved on an H200 (test/fixtures/programs/h200), opened later: arranged as the run itself was, so it reads
// the same — the API errors a device-side assert left behind folded under it, the memory CuPy's pool held at exit
// said apart, not counted as a leak.
const H200 = join(ROOT, 'test/fixtures/programs/h200');
const scratch = mkdtempSync(join(tmpdir(), 'wb-import-arranged-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The report a live run makes of the same XML and text (main/tools/sanitize-program.ts's collectReport). */
async function live(name: string, exitCode: number): Promise<SanitizeReport> {
  const dir = mkdtempSync(join(scratch, 'run-'));
  copyFileSync(join(H200, `${name}.xml`), join(dir, 'report-1.xml'));
  const output = new BoundedOutput();
  // The recorder appended its own "exit N in M ms" line: not the tool's.
  output.push(Buffer.from(readFileSync(join(H200, `${name}.txt`), 'utf8').replace(/^exit \d+ in \d+ ms\n?/m, '')));
  return collectReport({
    tool: 'memcheck',
    command: ['python3', 'x.py'],
    cwd: scratch,
    sanitizer: { path: 'compute-sanitizer', version: null },
    exitCode,
    signal: null,
    timedOut: null,
    cancelled: false,
    started: performance.now(),
    output,
    dir,
  });
}

const arranged = (r: SanitizeReport) => ({ findings: r.findings, groups: r.groups, heldAtExit: r.heldAtExit, verdict: r.verdict });

test("PyTorch's device-side assert, opened from its XML: one place, the two API errors after it folded under it", async () => {
  const report = await importSanitizerReport(join(H200, 'pytorch-device-assert.memcheck.xml'), null, null);
  assert.equal(report.verdict, 'found');
  assert.equal(report.headline, 'pytorch-device-assert.memcheck.xml: memcheck found 34 findings in 1 place.');
  assert.deepEqual(
    report.groups.map((g) => [g.kind, g.count, g.followedBy?.map((f) => `${f.example.api?.call} ${f.example.api?.error}`)]),
    [['device-error', 32, ['cudaLaunchKernel cudaErrorAssert', 'cudaGetLastError cudaErrorAssert']]],
  );
  assert.deepEqual(report.heldAtExit, []);
  // With the text beside it, as the run read it: the same groups, the same count, as the live run.
  const withText = await importSanitizerReport(join(H200, 'pytorch-device-assert.memcheck.xml'), join(H200, 'pytorch-device-assert.memcheck.txt'), 'memcheck');
  assert.deepEqual(arranged(withText), arranged(await live('pytorch-device-assert.memcheck', 86)));
});

test("a CuPy program's memcheck report, opened from its XML: its pool's memory held at exit, not a leak; clean", async () => {
  const report = await importSanitizerReport(join(H200, 'cupy-race.memcheck.xml'), null, null);
  assert.equal(report.verdict, 'clean');
  assert.deepEqual([report.findings, report.groups.length], [0, 0]);
  assert.deepEqual(
    report.heldAtExit?.map((h) => [h.holder, h.bytes, h.blocks, h.groups.every((g) => g.heldBy === h.holder)]),
    [['cupy-memory-pool', 264_192, 4, true]],
  );
  assert.match(report.headline, /found nothing of yours: the 264,192 bytes it reported as leaked were held at exit by CuPy's memory pool/);
  assert.doesNotMatch(report.headline, /leaked\.$/);
  assert.ok(report.details.some((d) => /^Held by CuPy's memory pool at exit — not a leak of yours: 264,192 bytes in 4 blocks/.test(d)));
  const withText = await importSanitizerReport(join(H200, 'cupy-race.memcheck.xml'), join(H200, 'cupy-race.memcheck.txt'), null);
  assert.deepEqual(arranged(withText), arranged(await live('cupy-race.memcheck', 86)));
});

test('CuPy out of bounds, opened from its XML: the read, the launch failure folded under it, the arrays CuPy held apart', async () => {
  const report = await importSanitizerReport(join(H200, 'cupy-out-of-bounds.memcheck.xml'), null, null);
  assert.equal(report.headline, 'cupy-out-of-bounds.memcheck.xml: memcheck found 2 findings in 1 place.');
  assert.deepEqual(
    report.groups.map((g) => [g.kind, g.followedBy?.map((f) => f.example.api?.error)]),
    [['memory-access', ['CUDA_ERROR_LAUNCH_FAILED']]],
  );
  assert.deepEqual(
    report.heldAtExit?.map((h) => [h.holder, h.bytes, h.blocks]),
    [['cupy-arrays', 8000, 2]],
  );
});
