import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { launchPlanSchema } from '../../core/plan/plan-schema';
import { BUNDLE_SCHEMA } from '../../core/bundle/bundle-limits';
import { openBundleView, readBundle } from '../../main/bundle/read-bundle';
import { BundleWriteError, buildBundleEntries, writeBundle } from '../../main/bundle/write-bundle';
import { makeRedactor } from '../../core/bundle/redact';
import { ROOT, runCli } from '../helpers/cli';
import type { RunOutcome } from '../../core/runner/run-outcome';

// `gpu-workbench bundle export` writes what `bundle inspect` opens, hides who and where by default, and
// never leaves a part of a zip behind.
const dir = mkdtempSync(join(tmpdir(), 'wb-export-'));
const RESULT = join(ROOT, 'test/fixtures/runs/oob-off-by-one.json');
const PLAN = join(ROOT, 'samples/oob-off-by-one/plan.json');
const recorded = JSON.parse(readFileSync(RESULT, 'utf8')) as { diagnosis: { kind: string } };
const UUID = 'GPU-5e7f6a2b-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
// Names that would leak: set as this machine's, then looked for in every byte of the bundle.
const leaky = {
  HOME: '/home/zelda-quartz',
  USER: 'zelda',
  LOGNAME: 'zelda',
  HOSTNAME: 'quartzhost-17.lab.example',
  LD_LIBRARY_PATH: '/home/zelda-quartz/cuda/lib64:/opt/cuda/lib64',
  CUDA_VISIBLE_DEVICES: UUID,
  SECRET_API_TOKEN: 'do-not-ship-me',
};
const SAN = join(ROOT, 'test/fixtures/sanitizer/h100');
// compute-sanitizer's own report of this sample on the H100, as it would be on a machine with these names in it.
const sanitizerXml = join(dir, 'report-1855.xml');
writeFileSync(
  sanitizerXml,
  readFileSync(join(SAN, 'gallery-oob-off-by-one-broken-1855.xml'), 'utf8').replace(
    '<ComputeSanitizerOutput/>',
    '<!-- saved by zelda on quartzhost-17 in /home/zelda-quartz/work -->\n<ComputeSanitizerOutput/>',
  ),
);
const sanitizerText = join(dir, 'report.txt');
writeFileSync(
  sanitizerText,
  `ran by zelda on quartzhost-17 in /home/zelda-quartz/work\n${readFileSync(join(SAN, 'gallery-oob-off-by-one-broken.txt'), 'utf8')}`,
);
const sanitizerArgs = ['--sanitizer-xml', sanitizerXml, '--sanitizer-text', sanitizerText, '--sanitizer-tool', 'memcheck'];
// NVML samples from a machine with these names: another user's process, its command line holding a token.
const samplesFile = join(dir, 'samples.json');
const startUs = (recordedStart() - 5) * 1000;
writeFileSync(
  samplesFile,
  JSON.stringify({
    intervalMs: 10,
    devices: [{ index: 0, name: 'NVIDIA H100 80GB HBM3', uuid: UUID, totalBytes: 85017493504 }],
    processes: [
      {
        pid: 4242,
        command: '/home/zelda-quartz/venv/bin/python train.py --token=do-not-ship-me',
        flag: null,
        firstSeenUs: startUs,
        lastSeenUs: startUs + 20_000,
      },
    ],
    samples: [0, 10_000, 20_000].map((t) => ({
      timeUs: startUs + t,
      devices: [{ index: 0, usedBytes: 2 ** 30, freeBytes: 85017493504 - 2 ** 30, totalBytes: 85017493504 }],
      processes: [{ device: 0, pid: 4242, usedBytes: 2 ** 30 }],
    })),
    dropped: 0,
  }),
);
// The result as recorded, with a compile log and device output that name this machine's user, host and home.
const leakyResult = join(dir, 'leaky-result.json');
{
  const outcome = JSON.parse(readFileSync(RESULT, 'utf8')) as {
    compile: { log: string }[];
    result: { deviceOutput?: { stepIndex: number; text: string; droppedBytes: number }[] };
  };
  outcome.compile[0]!.log += 'remark: zelda@quartzhost-17 built /home/zelda-quartz/kernels/broken.cu\n';
  outcome.result.deviceOutput = [{ stepIndex: 2, text: 'hello from quartzhost-17\n', droppedBytes: 0 }];
  // The samples the run took travel inside its outcome (run --trace, or the UI's run with sampling).
  (outcome as unknown as { samples: unknown }).samples = JSON.parse(readFileSync(samplesFile, 'utf8'));
  writeFileSync(leakyResult, JSON.stringify(outcome));
}
// A plan whose kernel says it came from the home folder (#line): nvcc and NVRTC write that path into the PTX.
const leakyPlan = join(dir, 'leaky-plan.json');
{
  const plan = JSON.parse(readFileSync(PLAN, 'utf8')) as { kernels: { source?: string; sourceFile?: string; sourceName?: string }[] };
  plan.kernels[0]!.source = `#line 1 "/home/zelda-quartz/kernels/broken.cu"\n${readFileSync(join(ROOT, 'samples/oob-off-by-one/broken.cu'), 'utf8')}`;
  plan.kernels[0]!.sourceName = 'broken.cu';
  delete plan.kernels[0]!.sourceFile;
  writeFileSync(leakyPlan, JSON.stringify(plan));
}
const H100_DEVICES = join(ROOT, 'test/fixtures/env/h100/devices.json');
const H100_UUID = 'GPU-211e0120-a03f-d321-37b8-500c399d5f3d';

function recordedStart(): number {
  return (JSON.parse(readFileSync(RESULT, 'utf8')) as { result: { startedAtMs: number } }).result.startedAtMs;
}

const text = (entries: Map<string, Uint8Array>) => [...entries.values()].map((b) => Buffer.from(b).toString('utf8')).join('\n');

test('export then inspect: the bundle round-trips with every entry the manifest names, the new ones included', async () => {
  const out = join(dir, 'oob.zip');
  const r = await runCli(
    [
      'bundle',
      'export',
      '--result',
      RESULT,
      '--plan',
      PLAN,
      ...sanitizerArgs,
      '--samples',
      samplesFile,
      '--devices',
      H100_DEVICES,
      '--out',
      out,
      '--doctor-timeout',
      '20',
    ],
    { env: leaky },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /✓ Wrote .*oob\.zip .*redacted/);
  const bundle = await readBundle(out);
  assert.deepEqual([...bundle.entries.keys()].sort(), [
    'compile.json',
    'devices.json',
    'doctor.json',
    'environment.json',
    'manifest.json',
    'plan.json',
    'ptx/scale.ptx',
    'repro/CMakeLists.txt',
    'repro/Makefile',
    'repro/README.md',
    'repro/repro.cu',
    'result.json',
    'samples.json',
    'sanitizer.json',
    'sanitizer/program-output.txt',
    'sanitizer/report-1855.xml',
    'sanitizer/tool-output.txt',
    'sources/broken.cu',
    'validation.json',
  ]);
  assert.equal(bundle.manifest.schema, BUNDLE_SCHEMA);
  assert.equal(bundle.manifest.redacted, true);
  assert.deepEqual(bundle.manifest.contents.sources, ['sources/broken.cu']);
  assert.deepEqual(bundle.manifest.contents.ptx, ['ptx/scale.ptx']);
  assert.equal(bundle.manifest.contents.samples, 'samples.json');
  const json = (name: string) => JSON.parse(Buffer.from(bundle.entries.get(name)!).toString('utf8')) as Record<string, unknown>;
  const plan = launchPlanSchema.parse(json('plan.json'));
  assert.match(plan.kernels[0]!.source, /i <= n/, 'the broken source is in the plan');
  assert.equal((json('result.json')['diagnosis'] as { kind: string }).kind, recorded.diagnosis.kind);
  assert.ok(Array.isArray((json('result.json')['result'] as { events: unknown[] }).events), 'the event log is inside the result');
  assert.ok(Array.isArray((json('doctor.json') as { checks?: unknown[] }).checks) || 'timedOut' in json('doctor.json'));
  assert.ok('facts' in json('doctor.json') || 'timedOut' in json('doctor.json'), "the doctor's facts go in");
  const compile = json('compile.json') as {
    kernels: { kernel: string; options: { arch: string }; record: { log: string; command: string }; ptx: string; ptxFrom: string }[];
  };
  assert.equal(compile.kernels[0]!.options.arch, 'sm_90');
  assert.match(compile.kernels[0]!.record.command, /nvrtcCompileProgram/);
  assert.match(compile.kernels[0]!.record.log, /Used 8 registers/);
  assert.equal(compile.kernels[0]!.ptx, 'ptx/scale.ptx');
  assert.match(compile.kernels[0]!.ptxFrom, /compile/);
  assert.match(Buffer.from(bundle.entries.get('ptx/scale.ptx')!).toString(), /\.entry _Z5scalePffi/);
  const validation = json('validation.json') as { device: { name: string }; launches: { stepIndex: number; checkedWith: string }[] };
  assert.equal(validation.device.name, 'NVIDIA H100 80GB HBM3');
  assert.deepEqual(
    validation.launches.map((l) => [l.stepIndex, l.checkedWith]),
    [[2, 'kernel']],
  );
  assert.equal((json('samples.json') as { samples: unknown[] }).samples.length, 3);
  assert.equal((json('sanitizer.json') as { tool: string }).tool, 'memcheck');
  assert.ok(!('rawXml' in json('sanitizer.json')), 'the XML goes in once, under sanitizer/');
  assert.match(Buffer.from(bundle.entries.get('sanitizer/report-1855.xml')!).toString(), /<ComputeSanitizerOutput\/>/);
  assert.match(Buffer.from(bundle.entries.get('repro/Makefile')!).toString(), /^ARCH \?= sm_90$/m, 'the run compiled for sm_90');
  const inspect = await runCli(['bundle', 'inspect', out, '--json']);
  assert.equal(inspect.code, 0, inspect.stderr);
  assert.equal((JSON.parse(inspect.stdout) as { entries: unknown[] }).entries.length, 19);
  // The views' reading of it: every role read, the samples on the timeline.
  const view = await openBundleView(out);
  assert.deepEqual(view.samples, { count: 3, devices: 1 });
  assert.ok(view.notes.every((n) => !/No NVML samples/.test(n)));
});

test('redaction by default holds in every entry, the new ones included: no user, host, home path, GPU UUID or unlisted variable', async () => {
  const out = join(dir, 'redacted.zip');
  const r = await runCli(['bundle', 'export', '--result', leakyResult, '--plan', leakyPlan, ...sanitizerArgs, '--devices', H100_DEVICES, '--out', out], {
    env: leaky,
  });
  assert.equal(r.code, 0, r.stderr);
  const bundle = await readBundle(out);
  for (const [name, bytes] of bundle.entries) {
    const content = Buffer.from(bytes).toString('utf8');
    for (const secret of ['zelda', 'quartzhost', '/home/zelda-quartz', UUID, H100_UUID, 'do-not-ship-me', 'SECRET_API_TOKEN'])
      assert.ok(!content.includes(secret), `"${secret}" is in ${name}`);
  }
  const env = JSON.parse(Buffer.from(bundle.entries.get('environment.json')!).toString()) as { redacted: boolean; variables: Record<string, string> };
  assert.equal(env.redacted, true);
  assert.equal(env.variables['LD_LIBRARY_PATH'], '~/cuda/lib64:/opt/cuda/lib64');
  assert.equal(env.variables['CUDA_VISIBLE_DEVICES'], 'GPU-0');
  const entry = (name: string) => Buffer.from(bundle.entries.get(name)!).toString();
  assert.match(entry('sanitizer/tool-output.txt') + entry('sanitizer/program-output.txt'), /ran by <user> on <host> in ~\/work/);
  assert.match(entry('sanitizer/report-1855.xml'), /saved by <user> on <host> in ~\/work/);
  assert.match(entry('compile.json'), /<user>@<host> built ~\/kernels\/broken\.cu/);
  assert.match(entry('ptx/scale.ptx'), /~\/kernels\/broken\.cu/, 'the PTX keeps the file, not the home folder');
  assert.match(entry('samples.json'), /"command": "python"/, "another process keeps its program's name, not its arguments");
  assert.ok(!('samples' in (JSON.parse(entry('result.json')) as object)), "the run's samples go in once, as samples.json");
  assert.match(entry('result.json'), /hello from <host>/);

  const plain = join(dir, 'plain.zip');
  const p = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--samples', samplesFile, '--out', plain, '--no-redact'], {
    env: leaky,
  });
  assert.equal(p.code, 0, p.stderr);
  assert.match(p.stdout, /NOT redacted/);
  const opened = await readBundle(plain);
  assert.equal(opened.manifest.redacted, false);
  assert.match(Buffer.from(opened.entries.get('environment.json')!).toString(), /\/home\/zelda-quartz\/cuda\/lib64/);
  assert.match(Buffer.from(opened.entries.get('samples.json')!).toString(), /train\.py/);
  assert.ok(!Buffer.from(opened.entries.get('environment.json')!).toString().includes('do-not-ship-me'), 'the allow-list holds without redaction too');
});

test('--preview prints exactly the files export writes and the redacted environment, and writes nothing', async () => {
  const out = join(dir, 'preview.zip');
  const r = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--out', out, '--preview', '--json'], { env: leaky });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!existsSync(out), 'a preview writes nothing');
  const preview = JSON.parse(r.stdout) as { files: { name: string }[]; environment: Record<string, string>; redacted: boolean };
  assert.deepEqual(preview.environment, {
    CUDA_VISIBLE_DEVICES: 'GPU-0',
    LD_LIBRARY_PATH: '~/cuda/lib64:/opt/cuda/lib64',
    ...(preview.environment['PATH'] ? { PATH: preview.environment['PATH'] } : {}),
  });
  const written = join(dir, 'same.zip');
  assert.equal((await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--out', written], { env: leaky })).code, 0);
  assert.deepEqual(
    preview.files.map((f) => f.name),
    [...(await readBundle(written)).entries.keys()],
  );
  const human = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--preview'], { env: leaky });
  assert.match(human.stdout, /nothing written/);
  assert.match(human.stdout, /^ {2}CUDA_VISIBLE_DEVICES=GPU-0$/m);
});

test('--no-sources leaves kernel text, PTX and repro/ out; the plan keeps its shape and still opens', async () => {
  const out = join(dir, 'nosrc.zip');
  const r = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--out', out, '--no-sources']);
  assert.equal(r.code, 0, r.stderr);
  const bundle = await readBundle(out);
  assert.ok(![...bundle.entries.keys()].some((n) => n.startsWith('sources/') || n.startsWith('repro/') || n.startsWith('ptx/')), 'no source, no PTX, no repro');
  const plan = launchPlanSchema.parse(JSON.parse(Buffer.from(bundle.entries.get('plan.json')!).toString()));
  assert.equal(plan.kernels[0]!.source, '');
  assert.ok(!text(bundle.entries).includes('i <= n'));
});

test('a bundle that cannot be written says why and leaves nothing: a missing folder, a folder in the way', async () => {
  const missing = join(dir, 'no-such-folder', 'b.zip');
  const r = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--out', missing]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /was not written to .*no-such-folder\/b\.zip: its folder does not exist\. Nothing was left behind\./);
  assert.ok(!existsSync(join(dir, 'no-such-folder')));
  const folder = join(dir, 'a-folder.zip');
  mkdirSync(folder);
  const f = await runCli(['bundle', 'export', '--result', RESULT, '--sample', 'oob-off-by-one', '--out', folder]);
  assert.equal(f.code, 1);
  assert.match(f.stderr, /it is a folder/);
  const bad = await runCli(['bundle', 'export', '--result', RESULT]);
  assert.equal(bad.code, 64);
  assert.match(bad.stderr, /--plan plan\.json or --sample NAME/);
});

test('a write that fails midway leaves the old bundle whole and no temporary file', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'wb-atomic-'));
  const target = join(folder, 'keep.zip');
  const good = new Map([['manifest.json', new TextEncoder().encode('{}')]]);
  await writeBundle(target, good);
  const before = readFileSync(target);
  // yazl refuses the second name after the first entry has streamed into the temporary file.
  const failing = new Map([
    ['manifest.json', new Uint8Array(64 * 1024).fill(65)],
    ['../escape.txt', new Uint8Array(8)],
  ]);
  await assert.rejects(writeBundle(target, failing), (e: unknown) => e instanceof BundleWriteError && /Nothing was left behind/.test(e.message));
  assert.deepEqual(readFileSync(target), before);
  assert.deepEqual(readdirSync(folder), ['keep.zip']);
});

test('a user named like a buffer (root, in containers): the plan and repro.cu keep the name, and the repro still builds', async (t) => {
  const plan = launchPlanSchema.parse({
    version: 1,
    kernels: [{ id: 'root', entry: 'root', source: '__global__ void root(float* root) { root[threadIdx.x] = 1.0f; }', sourceName: 'root.cu' }],
    buffers: [{ name: 'root', type: 'f32', count: 32 }],
    steps: [
      { op: 'alloc', buffer: 'root' },
      { op: 'launch', kernel: 'root', grid: [1, 1, 1], block: [32, 1, 1], args: [{ buffer: 'root' }] },
      { op: 'download', buffer: 'root', expect: { kind: 'constant', value: 1 } },
      { op: 'free', buffer: 'root' },
    ],
  });
  const outcome = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/oob-off-by-one.json'), 'utf8'));
  const { entries } = buildBundleEntries({
    plan,
    outcome,
    origin: '/root/plan.json',
    workbenchVersion: '0',
    createdAt: new Date(0).toISOString(),
    includeSources: true,
    redactor: makeRedactor({ userNames: ['root'], hostNames: ['gpu-box'], homeDirs: ['/root'] }),
    env: {},
    doctor: null,
    arch: 'sm_90',
  });
  const text = (name: string) => new TextDecoder().decode(entries.get(name)!);
  const written = JSON.parse(text('plan.json')) as { buffers: { name: string }[]; kernels: { id: string; entry: string }[] };
  assert.deepEqual([written.buffers[0]!.name, written.kernels[0]!.id, written.kernels[0]!.entry], ['root', 'root', 'root']);
  assert.doesNotMatch(text('repro/repro.cu'), /<user>/);
  if (!existsSync('/usr/local/cuda/bin/nvcc')) return t.skip('nvcc is not installed here');
  const dir = mkdtempSync(join(tmpdir(), 'wb-root-repro-'));
  writeFileSync(join(dir, 'repro.cu'), entries.get('repro/repro.cu')!);
  execFileSync('/usr/local/cuda/bin/nvcc', ['-arch=sm_90', '-o', join(dir, 'repro'), join(dir, 'repro.cu')], { stdio: 'pipe' });
});

test('bundle.preview and bundle.export from the UI: the preview lists exactly what is written; phases and bytes stream; a relative path is refused', async () => {
  const { createHandlers, dispatch } = await import('../../main/host-api');
  const { forkLauncher } = await import('../../main/process/launcher');
  const { createWorkbench } = await import('../../main/workbench');
  const workbench = createWorkbench(forkLauncher, { warmSpare: false });
  try {
    const handlers = createHandlers(workbench, 'serve');
    // The run on screen is the host's own: the result it opened, named by the id it answered.
    const opened = (await dispatch(handlers, 'run.open', { path: RESULT })) as { ok: boolean; value: { outcomeId: string } };
    assert.ok(opened.ok, JSON.stringify(opened));
    const { loadSample } = await import('../../main/services/sample-service');
    const plan = (await loadSample('oob-off-by-one', 'broken')).plan;
    const request = { plan, outcomeId: opened.value.outcomeId, origin: 'sample oob-off-by-one (broken)', includeSources: true, redact: true };
    const preview = (await dispatch(handlers, 'bundle.preview', request)) as {
      ok: boolean;
      value: { files: { name: string }[]; notes: string[]; environment: object };
    };
    assert.ok(preview.ok, JSON.stringify(preview));
    const events: { kind: string; phase?: string; written?: number }[] = [];
    const path = join(dir, 'ui.zip');
    const context = { signal: new AbortController().signal, emit: (e: unknown) => events.push(e as (typeof events)[number]) };
    const exported = (await dispatch(handlers, 'bundle.export', { ...request, path }, context)) as { ok: boolean; value: { path: string; bytes: number } };
    assert.ok(exported.ok, JSON.stringify(exported));
    assert.deepEqual(
      preview.value.files.map((f) => f.name),
      [...(await readBundle(path)).entries.keys()],
    );
    assert.deepEqual(
      events.filter((e) => e.kind === 'phase').map((e) => e.phase),
      ['check', 'doctor', 'devices', 'ptx', 'pack', 'write'],
    );
    const written = events.filter((e) => e.kind === 'progress').map((e) => e.written!);
    assert.ok(written.length > 0 && written.at(-1) === exported.value.bytes, 'the bytes written stream up to the whole zip');
    const relative = (await dispatch(handlers, 'bundle.export', { ...request, path: 'b.zip' })) as { ok: boolean; error: { code: string } };
    assert.equal(relative.error.code, 'RELATIVE_PATH');
    const notAPlan = (await dispatch(handlers, 'bundle.preview', { ...request, plan: { version: 1 } })) as {
      ok: boolean;
      error: { code: string; message: string };
    };
    assert.equal(notAPlan.error.code, 'BUNDLE_INPUT');
    assert.match(notAPlan.error.message, /The plan is not valid/);
    // The sanitizer report goes in by the id the host answered it with (sanitize.open here), never as data sent back.
    const opened2 = (await dispatch(handlers, 'sanitize.open', { xmlPath: null, textPath: join(ROOT, 'test/fixtures/sanitizer/memcheck-oob.txt') })) as {
      ok: boolean;
      value: { reportId: string; headline: string };
    };
    assert.ok(opened2.ok, JSON.stringify(opened2));
    assert.match(opened2.value.reportId, /^sanitizer-/);
    const withReport = (await dispatch(handlers, 'bundle.preview', { ...request, sanitizerId: opened2.value.reportId })) as typeof preview;
    assert.ok(withReport.ok, JSON.stringify(withReport));
    assert.ok(withReport.value.files.some((f) => f.name === 'sanitizer.json'));
    assert.ok(!preview.value.files.some((f) => f.name === 'sanitizer.json'), 'none without one');
    const sentBack = (await dispatch(handlers, 'bundle.preview', { ...request, sanitizer: { verdict: 'clean' } })) as { ok: boolean; error: { code: string } };
    assert.equal(sentBack.error.code, 'BAD_REQUEST');
    const gone = (await dispatch(handlers, 'bundle.preview', { ...request, sanitizerId: 'sanitizer-00000000-0000-4000-8000-000000000000' })) as {
      ok: boolean;
      error: { code: string; message: string };
    };
    assert.equal(gone.error.code, 'HELD_GONE');
    assert.match(
      gone.error.message,
      /no longer holds this sanitizer report .*: run the sanitizer again \(or open its report again\), then export the bundle\.$/,
    );
  } finally {
    await workbench.dispose();
  }
});

test('a cancelled export leaves no file and no temporary file, whenever it is cancelled; an existing bundle stays whole', async () => {
  const { exportBundle } = await import('../../main/bundle/bundle-service');
  const { BundleCancelledError } = await import('../../main/bundle/write-bundle');
  const { loadSample } = await import('../../main/services/sample-service');
  const folder = mkdtempSync(join(tmpdir(), 'wb-cancel-'));
  const plan = (await loadSample('oob-off-by-one', 'broken')).plan;
  const outcome = JSON.parse(readFileSync(RESULT, 'utf8')) as RunOutcome;
  const request = { plan, outcome, origin: 'sample', includeSources: true, redact: true };
  for (const at of ['doctor', 'ptx', 'write', 'progress'] as const) {
    const controller = new AbortController();
    const target = join(folder, `${at}.zip`);
    await assert.rejects(
      exportBundle(
        target,
        request,
        { compiler: null },
        {
          signal: controller.signal,
          onEvent: (e) => {
            if ((e.kind === 'phase' && e.phase === at) || (at === 'progress' && e.kind === 'progress')) controller.abort();
          },
        },
      ),
      (e: unknown) => e instanceof BundleCancelledError || /cancelled/.test((e as Error).message),
      at,
    );
    assert.deepEqual(readdirSync(folder), [], `cancelled at ${at}: nothing is left`);
  }
  const keep = join(folder, 'keep.zip');
  await exportBundle(keep, request, { compiler: null });
  const before = readFileSync(keep);
  const controller = new AbortController();
  await assert.rejects(
    exportBundle(keep, request, { compiler: null }, { signal: controller.signal, onEvent: (e) => e.kind === 'progress' && controller.abort() }),
    BundleCancelledError,
  );
  assert.deepEqual(readFileSync(keep), before, 'the bundle that was there is whole');
  assert.deepEqual(readdirSync(folder), ['keep.zip']);
});
