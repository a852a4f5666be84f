import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import type { DiagnosisReport } from '../../core/diagnose/report';
import { diagnosisMismatches, programSampleSchema } from '../../core/samples/program-sample';
import { parseJson, runCli, SAMPLES } from '../helpers/cli';

const PROGRAMS = join(SAMPLES, 'programs');
const out = process.env['GPU_WORKBENCH_FIXTURES_OUT'];

const samples = readdirSync(PROGRAMS)
  .filter((name) => existsSync(join(PROGRAMS, name, 'diagnose.json')))
  .sort()
  .map((name) => ({ name, sample: programSampleSchema.parse(JSON.parse(readFileSync(join(PROGRAMS, name, 'diagnose.json'), 'utf8'))) }));

test('the program gallery has its nine samples', () => {
  assert.equal(samples.length, 9, samples.map((s) => s.name).join(', '));
});

for (const { name, sample } of samples) {
  test(`diagnose ${name}: ${sample.title}`, async () => {
    const env = Object.entries(sample.env ?? {}).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
    const snapshot = out ? join(out, 'diagnose', `${name}.pickle`) : null;
    if (out) mkdirSync(join(out, 'diagnose'), { recursive: true });
    const args = ['diagnose', '--json', '--cwd', join(PROGRAMS, name), ...(sample.thorough ? ['--thorough'] : []), ...env];
    const r = await runCli([...args, ...(snapshot ? ['--save-snapshot', snapshot] : []), '--', ...sample.command], { timeoutMs: 540_000 });
    if (out) writeFileSync(join(out, 'diagnose', `${name}.json`), r.stdout);
    const report = parseJson<DiagnosisReport>(r);
    const steps = report.steps.map((s) => `${s.kind} ${s.status} ${Math.round(s.durationMs ?? 0)} ms`).join('; ');
    console.log(`# ${name}: ${report.verdict.kind} — ${report.verdict.sentence} [${steps}]`);
    assert.deepEqual(diagnosisMismatches(report, sample.expect), [], `${report.verdict.sentence}\n${r.stderr.slice(-3000)}`);
    assert.equal(r.code, report.verdict.kind === 'clean' ? 0 : 1);
    // Each sanitizer step says what really ran: the tool with its options, then the program, and what it set for it.
    for (const step of report.steps.filter((s) => s.kind === 'memcheck' || s.kind === 'racecheck' || s.kind === 'initcheck')) {
      assert.match(step.argv[0]!, /compute-sanitizer$/, step.argv.join(' '));
      assert.ok(step.argv.includes(step.kind), step.argv.join(' '));
      assert.deepEqual(step.argv.slice(-sample.command.length), sample.command);
      assert.equal(step.envChanges['CUPY_CACHE_SAVE_CUDA_SOURCE'], '1');
    }
  });
}

// Printed by the program under diagnosis: for each of its ancestors, nearest first, its executable, its command line and
// whether it has NVML and NVRTC mapped (an ancestor it may not read is listed with what could be read of it).
const ANCESTORS_LIBRARIES = `import json, os
pid, seen = os.getppid(), []
while pid > 1 and len(seen) < 8:
    entry = {"pid": pid}
    try:
        entry["cmdline"] = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ").decode(errors="replace")
        maps = open(f"/proc/{pid}/maps").read()
        entry["nvml"], entry["nvrtc"] = "libnvidia-ml" in maps, "libnvrtc" in maps
        pid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except OSError as error:
        entry["error"] = str(error)
        pid = 1
    seen.append(entry)
print(json.dumps(seen))
`;

test('a diagnosis loads NVML to watch the program, and not NVRTC, which it never uses', async () => {
  const r = await runCli(['diagnose', '--json', '--', 'python3', '-c', ANCESTORS_LIBRARIES], { timeoutMs: 60_000 });
  const report = parseJson<DiagnosisReport>(r);
  const output = report.evidence.runs.find((run) => run.kind === 'as-is')?.output ?? '';
  const line = output.split('\n').find((l) => l.startsWith('['));
  assert.ok(line, `the program printed no list: ${output}`);
  const ancestors = JSON.parse(line) as { pid: number; cmdline?: string; nvml?: boolean; nvrtc?: boolean }[];
  // The diagnosing CLI: the nearest ancestor whose command line runs the CLI's diagnose.
  const cli = ancestors.find((a) => /(?:cli|gpu-workbench)\.js diagnose /.test(a.cmdline ?? ''));
  assert.ok(cli, `no ancestor is the diagnosing CLI: ${line}`);
  console.log(`# the diagnosing process: ${JSON.stringify(cli)}`);
  assert.equal(cli.nvml, true, 'it watches the program through NVML');
  assert.equal(cli.nvrtc, false, 'it never loads NVRTC');
});

test('a libcuda of another version first on the program’s LD_LIBRARY_PATH is named against the driver NVML reports', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'wb-libcuda-copy-'));
  try {
    // Only its name is read (the loader would refuse it: it is no ELF file); a driver's libcuda is named for its version.
    writeFileSync(join(dir, 'libcuda.so.470.256.02'), 'a copy of another driver');
    symlinkSync('libcuda.so.470.256.02', join(dir, 'libcuda.so.1'));
    const r = await runCli(['diagnose', '--json', '--env', `LD_LIBRARY_PATH=${dir}`, '--', 'true'], { timeoutMs: 60_000 });
    const report = parseJson<DiagnosisReport>(r);
    const driver = report.evidence.environment.driver?.version;
    assert.ok(driver, 'NVML gives the driver’s version');
    const check = report.evidence.environment.checks.find((c) => c.id === 'libcuda-on-path-mismatch');
    assert.equal(check?.status, 'fail', JSON.stringify(report.evidence.environment.checks));
    assert.match(check!.detail, new RegExp(`libcuda 470\\.256\\.02, before the driver's own, but the kernel driver is ${driver!.replace(/\./g, '\\.')}`));
    console.log(`# ${check!.title}: ${check!.detail}`);
    // The driver's own folder on the path is right: nothing said.
    const own = await runCli(['diagnose', '--json', '--env', 'LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/usr/lib64', '--', 'true'], { timeoutMs: 60_000 });
    const ownChecks = parseJson<DiagnosisReport>(own).evidence.environment.checks.filter((c) => c.id.startsWith('libcuda'));
    assert.deepEqual(ownChecks, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
