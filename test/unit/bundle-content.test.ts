import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { bundleCompile, compileResultFromBundle, ptxEntryName, runArch } from '../../core/bundle/bundle-compile';
import { programName, sampleSeriesSchema, shareableSamples } from '../../core/bundle/bundle-samples';
import { boundedText, sanitizeReportSchema, sanitizerRawEntries } from '../../core/bundle/bundle-sanitizer';
import { headTail } from '../../core/bundle/raw-xml-text';
import { bundleValidation, profilesFromDevicesEntry, recordedKernelLimits } from '../../core/bundle/bundle-validation';
import { BundleContentError, bundleDoctor, bundleView } from '../../core/bundle/bundle-view';
import { bundleManifestSchema, namedEntries } from '../../core/bundle/manifest';
import { evaluateDoctor } from '../../core/doctor/evaluate';
import { parseDoctorFacts } from '../../core/doctor/facts';
import type { SampleSeries } from '../../core/memory/samples';
import { launchPlanSchema } from '../../core/plan/plan-schema';
import type { RunOutcome } from '../../core/runner/run-outcome';
import { deviceProfileSchema } from '../../core/validate/device-limits';

// The pure parts of a diagnostic bundle's new entries (issue 15): compile.json and ptx/, validation.json,
// samples.json, sanitizer/, and reading them back for the views. Data recorded on an H100 where there is some.
const ROOT = join(__dirname, '../../..');
const json = (path: string) => JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as unknown;
const outcome = json('test/fixtures/runs/oob-off-by-one.json') as RunOutcome;
const plan = launchPlanSchema.parse({
  version: 1,
  kernels: [
    {
      id: 'scale',
      entry: 'scale',
      source: readFileSync(join(ROOT, 'samples/oob-off-by-one/broken.cu'), 'utf8'),
      sourceName: 'broken.cu',
      options: { fastMath: true },
    },
  ],
  buffers: [{ name: 'x', type: 'f32', count: 1000, init: { kind: 'iota' } }],
  steps: [
    { op: 'alloc', buffer: 'x' },
    { op: 'upload', buffer: 'x' },
    {
      op: 'launch',
      kernel: 'scale',
      grid: [4, 1, 1],
      block: [256, 1, 1],
      args: [{ buffer: 'x' }, { scalar: { type: 'f32', value: 2 } }, { scalar: { type: 'i32', value: 1000 } }],
    },
    { op: 'download', buffer: 'x' },
    { op: 'free', buffer: 'x' },
  ],
});
const h100 = profilesFromDevicesEntry(json('test/fixtures/env/h100/devices.json'))[0]!;

test('runArch reads the architecture from either compiler’s command; null when nothing was compiled', () => {
  assert.equal(runArch(outcome), 'sm_90');
  const nvcc = { ...outcome.compile[0]!, command: 'nvcc -arch=compute_90a -lineinfo -Xptxas -v' };
  assert.equal(runArch({ compile: [nvcc] }), 'sm_90a');
  assert.equal(runArch({ compile: [] }), null);
});

test('compile.json: each kernel its options as compiled, its record, and its PTX entry or why there is none', () => {
  const { compile, ptxEntries } = bundleCompile(
    plan,
    outcome,
    'sm_90',
    () => 'sources/broken.cu',
    new Map([['scale', { text: '.entry _Z5scalePffi', from: 'the cache' }]]),
  );
  const k = compile.kernels[0]!;
  assert.deepEqual([k.kernel, k.entry, k.sourceName, k.source], ['scale', 'scale', 'broken.cu', 'sources/broken.cu']);
  assert.equal(k.options.arch, 'sm_90');
  assert.equal(k.options.fastMath, true, 'the plan’s own options, as the run compiled with them');
  assert.equal(k.record?.backend, 'nvrtc');
  assert.equal(k.ptx, ptxEntryName('scale'));
  assert.deepEqual([...ptxEntries], [['ptx/scale.ptx', '.entry _Z5scalePffi']]);
  const missing = bundleCompile(plan, { compile: [] }, 'sm_90', () => null, new Map([['scale', { missing: 'no compiler here' }]]));
  assert.equal(missing.compile.kernels[0]!.record, null, 'a kernel the run never compiled says so');
  assert.equal(missing.compile.kernels[0]!.ptx, null);
  assert.equal(missing.compile.kernels[0]!.ptxMissing, 'no compiler here');
  assert.equal(missing.ptxEntries.size, 0);
});

test("a bundle kernel's panels come from its recorded ptxas log, never from a compile here", () => {
  const { compile } = bundleCompile(plan, outcome, 'sm_90', () => null, new Map());
  const result = compileResultFromBundle(compile.kernels[0]!, plan.kernels[0]!.source, '.ptx text');
  assert.ok(result);
  assert.equal(result.ok, true);
  assert.equal(result.kernels[0]?.name, 'scale');
  assert.equal(result.kernels[0]?.registers, 8, 'from "Used 8 registers" in the recorded log');
  assert.equal(result.ptx, '.ptx text');
  assert.equal(result.arch, 'sm_90');
  assert.match(result.compilerVersion, /recorded in the bundle/);
  const never = bundleCompile(plan, { compile: [] }, 'sm_90', () => null, new Map()).compile.kernels[0]!;
  assert.equal(compileResultFromBundle(never, plan.kernels[0]!.source, null), null);
});

test('validation.json: the launches against the run’s device, with the kernel’s recorded resources; without a profile, said, not empty', () => {
  const v = bundleValidation(plan, { profile: h100, from: 'the H100 device list' }, outcome.result);
  assert.deepEqual(v.device, { name: 'NVIDIA H100 80GB HBM3', from: 'the H100 device list' });
  assert.equal(v.launches.length, 1);
  assert.equal(v.launches[0]!.checkedWith, 'kernel');
  assert.ok(
    v.launches[0]!.findings.some((f) => f.rule === 'underfilled-device'),
    '4 blocks on 132 SMs',
  );
  assert.equal(v.note, null);
  const tooBig = launchPlanSchema.parse({ ...plan, steps: plan.steps.map((s) => (s.op === 'launch' ? { ...s, block: [2048, 1, 1] } : s)) });
  assert.ok(bundleValidation(tooBig, { profile: h100, from: 'x' }, outcome.result).launches[0]!.findings.some((f) => f.severity === 'error'));
  const none = bundleValidation(plan, null, outcome.result);
  assert.equal(none.device, null);
  assert.deepEqual(none.launches, []);
  assert.match(none.note!, /No profile of the run's device \(NVIDIA H100 80GB HBM3\).*not checked/);
  const deviceOnly = bundleValidation(plan, { profile: h100, from: 'x' }, null);
  assert.equal(deviceOnly.launches[0]!.checkedWith, 'device');
  assert.match(deviceOnly.note!, /device's limits only/);
  assert.equal(recordedKernelLimits(outcome.result)('scale')?.numRegs, 8);
  assert.equal(recordedKernelLimits(outcome.result)('other'), null);
});

test('devices.json is read in every shape a bundle may hold: schema 2’s list, one profile, `devices --json`; anything else gives none', () => {
  assert.equal(profilesFromDevicesEntry({ from: 'x', profiles: [h100] }).length, 1);
  assert.equal(profilesFromDevicesEntry(h100)[0]?.device.name, 'NVIDIA H100 80GB HBM3');
  assert.equal(profilesFromDevicesEntry(json('test/fixtures/env/h100/devices.json'))[0]?.driverVersion, '580.159.04');
  assert.equal(deviceProfileSchema.safeParse(profilesFromDevicesEntry(json('profiles/nvidia-h200.json'))[0]).success, true);
  for (const junk of [null, 7, 'x', [], [{ format: 'other' }], { ok: false }]) assert.deepEqual(profilesFromDevicesEntry(junk), []);
});

const series: SampleSeries = {
  intervalMs: 10,
  devices: [{ index: 0, name: 'NVIDIA H100 80GB HBM3', uuid: 'GPU-x', totalBytes: 80e9 }],
  processes: [
    { pid: 7, command: '/home/alice/venv/bin/python train.py --token=s3cret', flag: null, firstSeenUs: 0, lastSeenUs: 1 },
    { pid: 8, command: null, flag: null, firstSeenUs: 0, lastSeenUs: 1 },
  ],
  samples: [{ timeUs: 0, devices: [{ index: 0, usedBytes: 1, freeBytes: 2, totalBytes: 3 }], processes: null }],
  dropped: 0,
};

test("samples.json: a redacted bundle keeps each process's program name, not its arguments; the schema refuses what is not a series", () => {
  assert.equal(programName('/home/alice/venv/bin/python train.py --token=s3cret'), 'python');
  assert.equal(programName('  ./a.out'), 'a.out');
  assert.equal(programName(''), null);
  assert.equal(programName(null), null);
  const shared = shareableSamples(series);
  assert.deepEqual(
    shared.processes.map((p) => p.command),
    ['python', null],
  );
  assert.equal(series.processes[0]!.command, '/home/alice/venv/bin/python train.py --token=s3cret', 'the series itself is untouched');
  assert.ok(sampleSeriesSchema.safeParse(series).success);
  for (const bad of [
    { ...series, samples: 'x' },
    { ...series, intervalMs: -1 },
    { ...series, samples: [{ timeUs: 'now', devices: [], processes: null }] },
  ])
    assert.equal(sampleSeriesSchema.safeParse(bad).success, false);
});

test('the sanitizer’s own output is kept bounded: its start and its end, saying how much was left out', () => {
  assert.equal(boundedText('short', 100), 'short');
  const long = `START${'x'.repeat(1000)}END`;
  const kept = boundedText(long, 100);
  assert.ok(kept.startsWith('START') && kept.endsWith('END'));
  assert.match(kept, /908 characters left out by GPU Workbench/);
  const collector = headTail(10);
  for (const chunk of ['abc', 'defgh', 'ijklmnop', 'qrstuvwxyz']) collector.push(chunk);
  assert.equal(collector.text(), 'abcde\n… 16 characters left out by GPU Workbench …\nvwxyz');
  const small = headTail(100);
  small.push('whole');
  assert.equal(small.text(), 'whole');
  const entries = sanitizerRawEntries({ toolOutput: '========= ERROR SUMMARY: 0 errors', programOutput: '' }, [
    { name: '/tmp/x/report-12.xml', text: '<a/>' },
    { name: 'report-12.xml', text: '<b/>' },
    { name: '../../evil', text: '<c/>' },
  ]);
  assert.deepEqual([...entries.keys()], ['sanitizer/tool-output.txt', 'sanitizer/report-12.xml', 'sanitizer/2-report-12.xml', 'sanitizer/evil.xml']);
});

test('the manifest: schema 1 bundles read with the new roles absent; every named entry is listed', () => {
  const old = bundleManifestSchema.parse({
    schema: 1,
    createdAt: 'x',
    workbench: { version: '0' },
    contents: { plan: 'plan.json', sources: ['sources/a.cu'] },
  });
  assert.deepEqual(
    [old.contents.compile, old.contents.ptx, old.contents.validation, old.contents.samples, old.contents.sanitizerRaw],
    [null, [], null, null, []],
  );
  assert.deepEqual(namedEntries(old), ['plan.json', 'sources/a.cu']);
  const now = bundleManifestSchema.parse({
    schema: 2,
    createdAt: 'x',
    workbench: { version: '0' },
    contents: {
      compile: 'compile.json',
      ptx: ['ptx/k.ptx'],
      validation: 'validation.json',
      samples: 'samples.json',
      sanitizerRaw: ['sanitizer/tool-output.txt'],
    },
  });
  assert.deepEqual(namedEntries(now).sort(), ['compile.json', 'ptx/k.ptx', 'samples.json', 'sanitizer/tool-output.txt', 'validation.json']);
  assert.equal(bundleManifestSchema.safeParse({ schema: 2, createdAt: 'x', workbench: { version: '0' }, contents: { surprise: 'x' } }).success, false);
});

test('the doctor in a bundle: judged again from its facts; the saved checks when the facts do not read; its failure said', () => {
  const facts = parseDoctorFacts(json('test/fixtures/env/h100/doctor-facts.json'));
  assert.ok(facts.ok);
  const fromFacts = bundleDoctor({ checks: [], facts: facts.facts });
  assert.equal(fromFacts.from, 'facts');
  assert.deepEqual(fromFacts.checks, evaluateDoctor(facts.facts));
  assert.equal(fromFacts.gatheredAt, facts.facts.gatheredAt);
  const saved = json('test/fixtures/env/h100/doctor.json') as { checks: unknown[] };
  const fromSaved = bundleDoctor({ checks: saved.checks, facts: { schema: 99 } });
  assert.equal(fromSaved.from, 'saved');
  assert.equal(fromSaved.checks.length, saved.checks.length);
  assert.match(fromSaved.note!, /facts in this bundle could not be read/);
  assert.match(bundleDoctor({ timedOut: true, detail: 'the doctor did not finish in 10000 ms' }).note!, /did not report.*10000 ms/);
  assert.equal(bundleDoctor(null).from, 'none');
  assert.equal(bundleDoctor({ checks: [{ id: 1 }] }).from, 'none');
});

test('bundleView refuses an entry that is not what its role says, naming it', () => {
  const enc = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
  const manifest = bundleManifestSchema.parse({
    schema: 2,
    createdAt: 'x',
    workbench: { version: '0' },
    contents: { plan: 'plan.json', sanitizer: 'sanitizer.json' },
  });
  const entries = new Map([
    ['plan.json', enc(plan)],
    ['sanitizer.json', enc({ verdict: 'clean', headline: 'trust me' })],
  ]);
  assert.throws(
    () => bundleView('b.zip', manifest, entries),
    (e: unknown) => e instanceof BundleContentError && /sanitizer\.json is not a sanitizer report/.test(e.message),
  );
  entries.set('sanitizer.json', enc('{'));
  assert.throws(() => bundleView('b.zip', manifest, entries), /sanitizer\.json is not valid JSON/);
  const ok = bundleView(
    'b.zip',
    bundleManifestSchema.parse({ schema: 2, createdAt: 'x', workbench: { version: '0' }, contents: { plan: 'plan.json' } }),
    entries,
  );
  assert.equal(ok.sources[0]?.sourceName, 'broken.cu');
  assert.ok(ok.notes.some((n) => /no run result/.test(n)));
  assert.ok(ok.notes.some((n) => /no compute-sanitizer report/.test(n)));
  assert.ok(sanitizeReportSchema.safeParse({}).success === false);
});
