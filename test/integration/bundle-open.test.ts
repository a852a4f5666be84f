import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { BUNDLE_SCHEMA } from '../../core/bundle/bundle-limits';
import type { BundleView } from '../../core/bundle/bundle-view';
import { decodeTimeline } from '../../core/memory/timeline-wire';
import { createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { createWorkbench } from '../../main/workbench';
import { bundleManifest, manyEmptyEntriesZip, tinyPlan, writeZip } from '../helpers/bundle-zips';
import { ROOT } from '../helpers/cli';

// bundle.open (issue 15): a bundle made from runs recorded on an H100 (scripts/bundle-fixtures.sh) opens with
// everything each view needs — from the bundle alone, on a machine with no GPU — and a hostile one is refused
// with its reason, nothing written anywhere: not beside it, not in the app's own state folder.
const dir = mkdtempSync(join(tmpdir(), 'wb-bundle-open-'));
const state = join(dir, 'state');
process.env['GPU_WORKBENCH_STATE_DIR'] = state;
process.env['GPU_WORKBENCH_CACHE_DIR'] = join(dir, 'cache');
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
const handlers = createHandlers(workbench, 'serve');
after(() => workbench.dispose());
const FIXTURES = join(ROOT, 'test/fixtures/bundles');

type Reply = { ok: boolean; value?: unknown; error?: { code: string; message: string } };
const call = (channel: string, request: unknown) => dispatch(handlers, channel, request) as Promise<Reply>;
const open = async (path: string): Promise<BundleView> => {
  const reply = await call('bundle.open', { path });
  assert.ok(reply.ok, reply.error?.message);
  return reply.value as BundleView;
};

test('a recorded out-of-bounds write opens with its plan, diagnosis, source, compile, PTX, findings, devices and doctor', async () => {
  const view = await open(join(FIXTURES, 'oob-off-by-one.zip'));
  // Recorded at schema 2; this version reads it (and writes BUNDLE_SCHEMA).
  assert.equal(view.manifest.schema, 2);
  assert.ok(BUNDLE_SCHEMA >= 2);
  assert.equal(view.recorded.device, 'NVIDIA H100 80GB HBM3');
  assert.equal(view.outcome?.diagnosis.kind, 'out-of-bounds-write');
  assert.equal(view.plan?.kernels[0]?.entry, 'scale');
  assert.equal(view.sources.length, 1);
  assert.equal(view.sources[0]!.sourceName, 'broken.cu');
  assert.equal(view.sources[0]!.entry, 'sources/broken.cu');
  assert.match(view.sources[0]!.text, /i <= n/);
  const k = view.kernels[0]!;
  assert.equal(k.compile.record?.backend, 'nvrtc');
  assert.match(k.compile.record!.log, /Used 8 registers/);
  assert.equal(k.compile.options.arch, 'sm_90');
  assert.match(k.ptx ?? '', /\.entry _Z5scalePffi/);
  assert.ok(k.compile.ptxFrom, 'where the PTX came from is said');
  assert.equal(view.validation?.device?.name, 'NVIDIA H100 80GB HBM3');
  assert.equal(view.validation?.launches[0]?.checkedWith, 'kernel', "checked with the kernel's recorded resources");
  assert.equal(view.devices[0]?.device.name, 'NVIDIA H100 80GB HBM3');
  assert.match(view.devices[0]!.device.uuid, /^GPU-\d+$/, 'the GPU UUID is a placeholder');
  assert.equal(view.doctor.from, 'facts', "the doctor's checks are judged again from the recorded facts");
  assert.ok(
    view.doctor.checks.some((c) => c.area === 'driver' && c.status === 'ok'),
    'the H100 had a driver',
  );
  assert.equal(view.environment?.redacted, true);
  assert.equal(view.samples, null);
  assert.ok(view.notes.some((n) => /No NVML samples/.test(n)));
  const timeline = decodeTimeline(view.timelines[0]);
  assert.equal(timeline.source, 'run');
  assert.ok(timeline.allocations.count >= 1);
  assert.equal(view.timelineSummary.length, 1);
  assert.equal(view.sanitizer?.tool, 'memcheck');
  assert.ok(view.sanitizerRaw.some((r) => r.name.endsWith('.xml')));
});

test('each recorded failure opens with the timeline markers and sanitizer findings a person looks for', async () => {
  const never = await open(join(FIXTURES, 'never-frees.zip'));
  assert.ok(decodeTimeline(never.timelines[0]).markers.some((m) => m.kind === 'leak'));
  const oom = await open(join(FIXTURES, 'allocation-too-large.zip'));
  assert.ok(decodeTimeline(oom.timelines[0]).markers.some((m) => m.kind === 'oom'));
  assert.equal(oom.outcome?.status, 'cuda-error');
  const race = await open(join(FIXTURES, 'shared-memory-race.zip'));
  assert.equal(race.sanitizer?.verdict, 'found');
  assert.equal(race.sanitizer?.groups[0]?.kind, 'race');
  assert.equal(race.sanitizer?.groups[0]?.where?.line, 7);
  assert.ok(race.sanitizerRaw.some((r) => r.name === 'sanitizer/tool-output.txt' || r.name === 'sanitizer/program-output.txt'));
  // Two kernels, each from its own file (the sample and its reference): both sources, each kernel's own compile and PTX.
  assert.deepEqual(race.sources.map((s) => s.sourceName).sort(), ['broken.cu', 'reference.cu']);
  assert.equal(race.kernels.length, 2);
  assert.ok(race.kernels.every((k) => k.ptx !== null));
});

const manifest = (over: object = {}) => bundleManifest(over);
const plan = tinyPlan;
const zip = (name: string, entries: Parameters<typeof writeZip>[2], rename?: [string, string]) => writeZip(dir, name, entries, rename);

/** Every file under a folder (recursively), to show nothing was written. */
const listing = (folder: string): string[] => {
  try {
    return readdirSync(folder, { recursive: true, withFileTypes: false }) as string[];
  } catch {
    return [];
  }
};

test('bundle.open refuses the hostile set, each with its reason, and writes nothing: not beside it, not in the state folder', async () => {
  const good = readdirSync(FIXTURES);
  const result = JSON.stringify({ status: 'ok' }); // not a run result
  const cases: [string, Promise<string>, RegExp][] = [
    [
      'zip-slip',
      zip(
        'slip.zip',
        [
          { name: 'manifest.json', data: manifest() },
          { name: 'aa/evil.sh', data: 'x' },
        ],
        ['aa/evil.sh', '../evil.sh'],
      ),
      /climbs out|invalid relative path|not a readable zip/,
    ],
    [
      'absolute path',
      zip(
        'abs.zip',
        [
          { name: 'manifest.json', data: manifest() },
          { name: 'xetc/passwd', data: 'x' },
        ],
        ['xetc/passwd', '/etc/passwd'],
      ),
      /absolute path/,
    ],
    [
      'symlink',
      zip('link.zip', [
        { name: 'manifest.json', data: manifest() },
        { name: 'link', data: '/etc/passwd', mode: 0o120777 },
      ]),
      /is a symbolic link/,
    ],
    [
      'zip bomb',
      zip('bomb.zip', [
        { name: 'manifest.json', data: manifest() },
        { name: 'zeros.bin', data: Buffer.alloc(64 * 1024 * 1024) },
      ]),
      /zip bomb's ratio/,
    ],
    [
      '100,000 entries',
      Promise.resolve(join(dir, 'many.zip')).then((p) => (writeFileSync(p, manyEmptyEntriesZip(100_000)), p)),
      /100000 entries, over the limit/,
    ],
    ['bad JSON in the manifest', zip('badjson.zip', [{ name: 'manifest.json', data: '{"schema": 2,' }]), /manifest\.json is not valid JSON/],
    [
      'bad JSON in a named entry',
      zip('badresult.zip', [
        { name: 'manifest.json', data: manifest({ contents: { plan: null, result: 'result.json', sources: [] } }) },
        { name: 'result.json', data: '{"status": ' },
      ]),
      /result\.json is not valid JSON/,
    ],
    [
      'a result that is not one',
      zip('notresult.zip', [
        { name: 'manifest.json', data: manifest({ contents: { plan: null, result: 'result.json', sources: [] } }) },
        { name: 'result.json', data: result },
      ]),
      /result\.json is not a run result/,
    ],
    [
      'samples that are not samples',
      zip('badsamples.zip', [
        { name: 'manifest.json', data: manifest({ contents: { plan: null, result: null, sources: [], samples: 'samples.json' } }) },
        { name: 'samples.json', data: JSON.stringify({ intervalMs: 'fast', samples: 7 }) },
      ]),
      /samples\.json is not NVML samples/,
    ],
    ['future schema', zip('future.zip', [{ name: 'manifest.json', data: manifest({ schema: BUNDLE_SCHEMA + 1 }) }]), /made by a newer GPU Workbench/],
    [
      'a forbidden compiler flag in its plan',
      zip('flag.zip', [
        { name: 'manifest.json', data: manifest({ contents: { plan: 'plan.json', result: null, sources: [] } }) },
        { name: 'plan.json', data: plan({ extraFlags: ['-Xcompiler', '-fplugin=/tmp/x.so'] }) },
      ]),
      /its plan is not valid/,
    ],
    [
      'an include path that would reach a shell',
      zip('shell.zip', [
        { name: 'manifest.json', data: manifest({ contents: { plan: 'plan.json', result: null, sources: [] } }) },
        { name: 'plan.json', data: plan({ includePaths: [`$(touch ${join(dir, 'ran')})`] }) },
      ]),
      /its plan is not valid/,
    ],
  ];
  const paths: string[] = [];
  for (const [, p] of cases) paths.push(await p);
  const before = { dir: listing(dir).sort(), state: listing(state) };
  for (let i = 0; i < cases.length; i++) {
    const [what, , reason] = cases[i]!;
    const started = performance.now();
    const reply = await call('bundle.open', { path: paths[i] });
    assert.equal(reply.ok, false, `${what} was opened`);
    assert.equal(reply.error?.code, 'BUNDLE_REFUSED', `${what}: ${reply.error?.message}`);
    assert.match(reply.error!.message, /^The bundle .* was not opened: .*\. Nothing was written\.$/s, what);
    assert.match(reply.error!.message, reason, what);
    assert.ok(performance.now() - started < 5000, `${what} took ${performance.now() - started} ms`);
  }
  assert.deepEqual(listing(dir).sort(), before.dir, 'nothing was extracted or written beside the bundles');
  assert.deepEqual(listing(state), before.state, "nothing was written in the app's state folder");
  assert.deepEqual(readdirSync(FIXTURES), good);
  const relative = await call('bundle.open', { path: 'oob-off-by-one.zip' });
  assert.equal(relative.error?.code, 'RELATIVE_PATH');
  assert.ok((await call('app.info', {})).ok, 'the host is unharmed');
});

test('a schema 1 bundle still opens, and says what it lacks', async () => {
  const recorded = JSON.parse((await import('node:fs')).readFileSync(join(ROOT, 'test/fixtures/runs/never-frees.json'), 'utf8')) as unknown;
  const sample = JSON.parse((await import('node:fs')).readFileSync(join(ROOT, 'samples/never-frees/plan.json'), 'utf8')) as {
    kernels: { sourceFile?: string; source?: string }[];
  };
  for (const k of sample.kernels) {
    k.source = (await import('node:fs')).readFileSync(join(ROOT, 'samples/never-frees', k.sourceFile!), 'utf8');
    delete k.sourceFile;
  }
  const path = await zip('schema1.zip', [
    {
      name: 'manifest.json',
      data: JSON.stringify({
        schema: 1,
        createdAt: '2026-11-22T00:00:00Z',
        workbench: { version: '0.1.0' },
        contents: { plan: 'plan.json', result: 'result.json', sources: [] },
      }),
    },
    { name: 'plan.json', data: JSON.stringify(sample) },
    { name: 'result.json', data: JSON.stringify(recorded) },
  ]);
  const view = await open(path);
  assert.equal(view.manifest.schema, 1);
  assert.ok(view.notes.some((n) => /bundle schema 1: it has no PTX, compile options, validator findings or NVML samples/.test(n)));
  assert.equal(view.kernels[0]?.ptx, null);
  assert.match(view.kernels[0]!.compile.ptxMissing ?? '', /schema 1/);
  assert.ok(decodeTimeline(view.timelines[0]).markers.some((m) => m.kind === 'leak'));
  assert.equal(view.doctor.from, 'none');
});

test('bundles recorded end to end on the GPU machine (scripts/record-bundles.sh) open, their samples on the timeline', async (t) => {
  const recorded = join(FIXTURES, 'recorded');
  const files = listing(recorded).filter((f) => f.endsWith('.zip'));
  if (files.length === 0) return t.skip('none recorded yet: run scripts/record-bundles.sh on the GPU machine and commit test/fixtures/bundles/recorded/');
  for (const file of files) {
    const view = await open(join(recorded, file));
    assert.ok(view.outcome, file);
    assert.ok(view.timelines.length === 1, `${file}: ${view.notes.join(' ')}`);
    if (view.samples)
      assert.ok(
        decodeTimeline(view.timelines[0]).counters.some((c) => c.group === 'device'),
        `${file}: the device's memory is drawn`,
      );
    assert.ok(
      view.kernels.every((k) => k.ptx !== null),
      `${file}: every kernel's PTX`,
    );
    assert.ok(view.validation?.device, `${file}: the launches were checked against the run's device`);
  }
});
