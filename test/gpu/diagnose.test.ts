import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
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
  });
}
