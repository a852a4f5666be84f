import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { RAW_XML_KEPT_CHARS } from '../../core/bundle/raw-xml-text';
import type { SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { readBundle } from '../../main/bundle/read-bundle';
import { parseJson, ROOT, runCli } from '../helpers/cli';

// `gpu-workbench sanitize -- <command>` against a stand-in for compute-sanitizer's process: it answers
// --version, then either replays what the real tool wrote on an H100 (its XML to the --save path, its text to
// stdout, its exit status) or misbehaves as a tool can (hangs, floods, dies silent, writes broken XML). What
// is tested is the workbench's handling of the tool's process and output; the GPU suite runs the real tool.
const dir = mkdtempSync(join(tmpdir(), 'gpu-workbench-fake-sanitizer-'));
const FIXTURES = join(ROOT, 'test/fixtures/sanitizer/h100');
const tool = join(dir, 'compute-sanitizer');
writeFileSync(
  tool,
  `#!/bin/bash
if [ "$1" = --version ]; then echo 'NVIDIA (R) Compute Sanitizer'; echo 'Version 2025.3.1.0 (build 36400806) (public-release)'; exit 0; fi
save=''; prev=''
for a in "$@"; do [ "$prev" = --save ] && save=$a; prev=$a; done
save=\${save//%p/$$}
case "$FAKE_MODE" in
  replay)
    [ -n "$FAKE_XML" ] && cp "$FAKE_XML" "$save"
    grep -v '^exit [0-9]* in [0-9]* ms$' "$FAKE_TEXT"
    exit "$FAKE_EXIT" ;;
  hang) echo "$$" > "$FAKE_PIDS"; sleep 1000 & echo $! >> "$FAKE_PIDS"; wait ;;
  silent) exit 3 ;;
  daemon) setsid sleep 60 & echo $! > "$FAKE_PIDS"; printf '<?xml version="1.0"?>\\n<ComputeSanitizerOutput/>\\n' > "$save"; echo '========= ERROR SUMMARY: 0 errors'; exit 0 ;;
  flood) head -c 104857600 /dev/zero | tr '\\0' 'x'; echo; echo '========= ERROR SUMMARY: 0 errors'; printf '<?xml version="1.0"?>\\n<ComputeSanitizerOutput/>\\n' > "$save"; exit 0 ;;
  truncated) head -c 3000 "$FAKE_XML" > "$save"; echo '========= COMPUTE-SANITIZER'; exit 1 ;;
  entities) printf '<?xml version="1.0"?>\\n<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>\\n<ComputeSanitizerOutput><record><kind>Precise</kind><what><text>&c;&c;&c;</text></what></record></ComputeSanitizerOutput>\\n' > "$save"; echo '========= ERROR SUMMARY: 1 error'; exit 86 ;;
esac
`,
);
chmodSync(tool, 0o755);
after(() => undefined);

/** Alive and not a zombie (a dead child of init waits there until init reaps it; in a container it may never). */
const running = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0] !== 'Z';
  } catch {
    return false;
  }
};

const sanitize = (mode: Record<string, string>, args: string[], timeoutMs = 60_000) =>
  runCli(['sanitize', '--json', ...args, '--', 'python3', 'program.py'], {
    env: { GPU_WORKBENCH_COMPUTE_SANITIZER: tool, ...mode },
    timeoutMs,
  });

test('sanitize: memcheck on the off-by-one, as the H100 wrote it: the line, the thread, the allocation it overran; exit 1', async () => {
  const r = await sanitize(
    { FAKE_MODE: 'replay', FAKE_XML: join(FIXTURES, 'memcheck-oob.xml'), FAKE_TEXT: join(FIXTURES, 'memcheck-oob.xml.txt'), FAKE_EXIT: '86' },
    [],
  );
  assert.equal(r.code, 1, r.stderr);
  const report = parseJson<SanitizeReport>(r);
  assert.equal(report.verdict, 'found');
  const write = report.groups.find((g) => g.kind === 'memory-access')!;
  assert.deepEqual([write.where?.func, write.where?.line, write.count], ['offByOne', 12, 1]);
  assert.deepEqual(write.example.nearest && [write.example.nearest.side, write.example.nearest.distance, write.example.nearest.allocationSize], [
    'after',
    1,
    4000,
  ]);
  assert.equal(
    report.groups.filter((g) => g.kind === 'leak').reduce((n, g) => n + g.leakedBytes, 0),
    8000,
  );
  assert.match(report.programOutput, /cudaDeviceSynchronize: cudaErrorLaunchFailure/);
  assert.doesNotMatch(report.programOutput, /=========/);
  const human = await runCli(['sanitize', '--', 'python3', 'program.py'], {
    env: {
      GPU_WORKBENCH_COMPUTE_SANITIZER: tool,
      FAKE_MODE: 'replay',
      FAKE_XML: join(FIXTURES, 'memcheck-oob.xml'),
      FAKE_TEXT: join(FIXTURES, 'memcheck-oob.xml.txt'),
      FAKE_EXIT: '86',
    },
  });
  assert.match(human.stdout, /offByOne.*sanitizer_cases\.cu:12/);
  assert.match(human.stdout, /memcheck found/);
});

test('sanitize: a program killed before the tool wrote its XML (the runner after a sticky error): the findings from the text, found', async () => {
  const r = await sanitize({ FAKE_MODE: 'replay', FAKE_XML: '', FAKE_TEXT: join(FIXTURES, 'gallery-null-pointer-broken.txt'), FAKE_EXIT: '139' }, []);
  assert.equal(r.code, 1, r.stderr);
  const report = parseJson<SanitizeReport>(r);
  assert.equal(report.verdict, 'found', report.headline);
  assert.equal(report.findingsFrom, 'text');
  assert.deepEqual(report.xmlFiles, []);
  const atLine = report.groups.filter((g) => g.where?.path === 'kernel.cu' && g.where.line === 10);
  assert.equal(atLine.length, 1);
  assert.deepEqual(
    [atLine[0]!.kind, atLine[0]!.where?.func, atLine[0]!.count, atLine[0]!.threads],
    ['memory-access', 'writeThrough', 32, { min: { x: 0, y: 0, z: 0 }, max: { x: 31, y: 0, z: 0 } }],
  );
  assert.equal(atLine[0]!.userFrame, null, 'the stack is the driver, the addon and Node: none of it is the user’s');
  assert.ok(
    report.problems.some((p) => /XML report is missing: the program under it probably crashed or was killed .* come from the tool’s text output/.test(p)),
    report.problems.join(' | '),
  );
  assert.match(report.details.join(' '), /XML report is missing/);
  assert.match(report.programOutput, /CUDA_ERROR_LAUNCH_FAILED at step 1/);
});

test('sanitize: a clean run says what the check covers, and exits 0', async () => {
  const r = await sanitize(
    { FAKE_MODE: 'replay', FAKE_XML: join(FIXTURES, 'synccheck-clean.xml'), FAKE_TEXT: join(FIXTURES, 'synccheck-clean.xml.txt'), FAKE_EXIT: '0' },
    ['--tool', 'synccheck'],
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const report = parseJson<SanitizeReport>(r);
  assert.equal(report.verdict, 'clean');
  assert.match(report.details.join(' '), /synccheck checks barriers and warp syncs in this run only/);
});

test('sanitize: a program the tool never saw make a CUDA call is not called clean', async () => {
  const text = join(dir, 'no-cuda.txt');
  writeFileSync(text, '========= COMPUTE-SANITIZER\n========= Error: Target application terminated before first instrumented API call\n');
  const r = await sanitize({ FAKE_MODE: 'replay', FAKE_XML: '', FAKE_TEXT: text, FAKE_EXIT: '255' }, []);
  assert.equal(r.code, 1);
  const report = parseJson<SanitizeReport>(r);
  assert.equal(report.verdict, 'no-cuda');
  assert.match(report.headline, /saw no CUDA call: nothing was checked/);
});

test('sanitize: a tool that exits non-zero with no output and no report is a clear failure, not a clean run', async () => {
  const r = await sanitize({ FAKE_MODE: 'silent' }, []);
  assert.equal(r.code, 1);
  const report = parseJson<SanitizeReport>(r);
  assert.equal(report.verdict, 'tool-failed');
  assert.match(report.headline, /did not finish its check \(exit 3\)/);
  assert.match(report.details.join(' '), /wrote no report and said nothing about why/);
});

test('sanitize: a tool that hangs is stopped at --timeout with everything it started, and says so', async () => {
  const pids = join(dir, 'hang.pids');
  const r = await sanitize({ FAKE_MODE: 'hang', FAKE_PIDS: pids }, ['--timeout', '2'], 30_000);
  assert.ok(r.ms < 15_000, `took ${r.ms} ms`);
  const report = parseJson<SanitizeReport>(r);
  assert.equal(report.verdict, 'timed-out');
  assert.match(report.headline, /ran past 2 s and was stopped/);
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const pid of readFileSync(pids, 'utf8').trim().split('\n').map(Number)) assert.equal(running(pid), false, `process ${pid} is still there`);
});

test('sanitize: 100 MB of output is kept within a bound, and the verdict still comes from the tool’s summary', async () => {
  const r = await sanitize({ FAKE_MODE: 'flood' }, [], 120_000);
  assert.equal(r.code, 0, r.stderr.slice(0, 500));
  const report = parseJson<SanitizeReport>(r);
  assert.ok(report.outputDroppedBytes > 90 * 2 ** 20, String(report.outputDroppedBytes));
  assert.ok(r.stdout.length < 12 * 2 ** 20, `the JSON report is ${r.stdout.length} bytes`);
  assert.equal(report.verdict, 'clean');
});

test('sanitize: a report cut off in the middle keeps what it has and says the tool may have died', async () => {
  const r = await sanitize({ FAKE_MODE: 'truncated', FAKE_XML: join(FIXTURES, 'memcheck-null.xml') }, []);
  assert.equal(r.code, 1);
  const report = parseJson<SanitizeReport>(r);
  assert.notEqual(report.verdict, 'clean');
  assert.ok(
    report.problems.some((p) => /cut off|ended before|truncated/i.test(p)),
    report.problems.join(' | '),
  );
});

test('sanitize: an XML report with entity declarations is refused, not expanded', async () => {
  const r = await sanitize({ FAKE_MODE: 'entities' }, []);
  assert.equal(r.code, 1);
  const report = parseJson<SanitizeReport>(r);
  assert.ok(
    report.problems.some((p) => /DOCTYPE|entit/i.test(p)),
    report.problems.join(' | '),
  );
  assert.ok(r.stdout.length < 100_000);
});

test('sanitize: without compute-sanitizer, exit 2 and where to get it', async () => {
  const r = await runCli(['sanitize', '--', 'true'], {
    env: { GPU_WORKBENCH_COMPUTE_SANITIZER: join(dir, 'absent'), PATH: '/usr/bin:/bin', CUDA_HOME: dir, CUDA_PATH: dir },
  });
  // /usr/local/cuda on this machine has no compute-sanitizer; where one is installed, this test proves nothing.
  if (existsSync('/usr/local/cuda/bin/compute-sanitizer')) return;
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /compute-sanitizer was not found .* comes with the CUDA toolkit/);
});

test('sanitize: a wrong tool or --env is a usage error', async () => {
  assert.equal((await runCli(['sanitize', '--tool', 'valgrind', '--', 'true'])).code, 64);
  assert.equal((await runCli(['sanitize', '--env', '1X=2', '--', 'true'])).code, 64);
});

test('sanitize a gallery sample with no GPU here: the run says why it could not start, exit 2, nothing pretends to be checked', async () => {
  const r = await runCli(['sanitize', '--json', '--sample', 'oob-off-by-one'], { env: { GPU_WORKBENCH_COMPUTE_SANITIZER: tool, FAKE_MODE: 'silent' } });
  assert.equal(r.code, 2, r.stdout + r.stderr);
  const { report, run } = parseJson<{ report: SanitizeReport; run: { status: string; diagnosis: { headline: string } } }>(r);
  assert.equal(run.status, 'unavailable');
  assert.notEqual(report.verdict, 'clean');
  const human = await runCli(['sanitize', '--sample', 'oob-off-by-one'], { env: { GPU_WORKBENCH_COMPUTE_SANITIZER: tool, FAKE_MODE: 'silent' } });
  assert.match(human.stdout, /The run itself: .*(driver|GPU)/i);
});

test('sanitize: a kernel and a program at once, or two files, are usage errors', async () => {
  const env = { GPU_WORKBENCH_COMPUTE_SANITIZER: tool };
  assert.equal((await runCli(['sanitize', '--sample', 'oob-off-by-one', '--', 'python3', 'x.py'], { env })).code, 64);
  assert.equal((await runCli(['sanitize', 'a.cu', 'b.cu', '--kernel', 'k'], { env })).code, 64);
});

test('sanitize: a daemon the program started in a session of its own, holding the output open, does not hold the answer', async () => {
  const pids = join(dir, 'daemon.pids');
  const r = await sanitize({ FAKE_MODE: 'daemon', FAKE_PIDS: pids }, [], 30_000);
  try {
    assert.ok(r.ms < 15_000, `took ${r.ms} ms`);
    assert.equal(parseJson<SanitizeReport>(r).verdict, 'clean');
  } finally {
    for (const pid of readFileSync(pids, 'utf8').trim().split('\n').map(Number)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  }
});

// The CLI's report keeps the tool's own XML (bounded, as the app's does: core/bundle/bundle-sanitizer.ts), so a
// bundle made from the CLI carries it: `sanitize --json` and then `bundle export --sanitizer`, as
// scripts/record-bundles.sh does on the GPU machine.
test('sanitize --json keeps the XML the tool wrote, as it wrote it; bundle export --sanitizer then carries it under sanitizer/', async () => {
  const xml = join(FIXTURES, 'memcheck-oob.xml');
  const r = await sanitize({ FAKE_MODE: 'replay', FAKE_XML: xml, FAKE_TEXT: join(FIXTURES, 'memcheck-oob.xml.txt'), FAKE_EXIT: '86' }, []);
  assert.equal(r.code, 1, r.stderr);
  const report = parseJson<SanitizeReport>(r);
  assert.equal(report.findingsFrom, 'xml');
  assert.equal(report.rawXml?.length, 1);
  const kept = report.rawXml![0]!;
  assert.match(kept.name, /^report-\d+\.xml$/);
  assert.deepEqual(
    report.xmlFiles.map((f) => f.name),
    [kept.name],
  );
  assert.equal(kept.text, readFileSync(xml, 'utf8'), 'whole, as the tool wrote it');

  const reportFile = join(dir, 'sanitize.json');
  writeFileSync(reportFile, r.stdout);
  const out = join(dir, 'with-xml.zip');
  const exported = await runCli([
    'bundle',
    'export',
    '--result',
    join(ROOT, 'test/fixtures/runs/oob-off-by-one.json'),
    '--sample',
    'oob-off-by-one',
    '--sanitizer',
    reportFile,
    '--no-ptx',
    '--doctor-timeout',
    '5',
    '--out',
    out,
  ]);
  assert.equal(exported.code, 0, exported.stderr + exported.stdout);
  assert.doesNotMatch(exported.stdout, /XML report is not at hand/);
  const bundle = await readBundle(out);
  const inBundle = bundle.entries.get(`sanitizer/${kept.name}`);
  assert.ok(inBundle, [...bundle.entries.keys()].join(', '));
  assert.equal(Buffer.from(inBundle).toString('utf8'), readFileSync(xml, 'utf8'));
  assert.ok(!('rawXml' in (JSON.parse(Buffer.from(bundle.entries.get('sanitizer.json')!).toString('utf8')) as object)), 'the XML goes in once');
});

test('sanitize --json: an XML past the bound is kept as its start and its end, and every finding in it is still read', async () => {
  // The H100's ten-record report, its records repeated past RAW_XML_KEPT_CHARS (the tool's own text, over and over).
  const recorded = readFileSync(join(FIXTURES, 'memcheck-many-limit10.xml'), 'utf8');
  const open = recorded.indexOf('  <record>');
  const close = recorded.lastIndexOf('</ComputeSanitizerOutput>');
  const records = recorded.slice(open, close);
  const copies = Math.ceil((2 * RAW_XML_KEPT_CHARS) / records.length);
  const big = join(dir, 'memcheck-big.xml');
  writeFileSync(big, recorded.slice(0, open) + records.repeat(copies) + recorded.slice(close));
  const r = await sanitize(
    {
      FAKE_MODE: 'replay',
      FAKE_XML: big,
      FAKE_TEXT: join(FIXTURES, 'memcheck-many-limit10.xml.txt'),
      FAKE_EXIT: '86',
    },
    [],
  );
  const report = parseJson<SanitizeReport>(r);
  assert.equal(report.findingsFrom, 'xml');
  assert.equal(report.findings, copies * 10);
  const kept = report.rawXml![0]!.text;
  assert.ok(kept.length < RAW_XML_KEPT_CHARS + 200, `${kept.length} characters kept`);
  assert.ok(kept.startsWith(recorded.slice(0, open)), 'its start');
  assert.ok(kept.endsWith('</ComputeSanitizerOutput>\n'), 'its end: where the tool closes it');
  assert.match(kept, /\n… \d+ characters left out by GPU Workbench …\n/);
});
