import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { BundleView } from '../../core/bundle/bundle-view';
import { HIDDEN_VALUE } from '../../core/bundle/bundle-diagnosis';
import type { DiagnosisReport } from '../../core/diagnose/report';
import { redactPickleStrings } from '../../core/memory/redact-pickle';
import { unpickle } from '../../core/memory/unpickle';
import { createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { createWorkbench } from '../../main/workbench';
import { bundleManifest, writeZip } from '../helpers/bundle-zips';
import { ROOT, runCli } from '../helpers/cli';

// A diagnosis exports as a bundle and reopens from one (issue 24): the report, the snapshot, the doctor; the user's
// own variables hidden; a bundle whose diagnosis is not one refused with its name.
const dir = mkdtempSync(join(tmpdir(), 'wb-diagnose-bundle-'));
process.env['GPU_WORKBENCH_STATE_DIR'] = join(dir, 'state');
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
const handlers = createHandlers(workbench, 'serve');
after(() => workbench.dispose());
const FIXTURES = join(ROOT, 'test/fixtures/diagnoses');
type Reply<T> = { ok: boolean; value?: T; error?: { code: string; message: string } };
const call = <T>(channel: string, request: unknown) => dispatch(handlers, channel, request) as Promise<Reply<T>>;

test('a recorded out-of-memory diagnosis opens with its snapshot, exports as a bundle, and reopens with the snapshot placed for the Memory tab', async () => {
  const opened = await call<DiagnosisReport>('diagnose.open', { path: join(FIXTURES, 'pytorch-oom-too-large.json') });
  assert.ok(opened.ok, opened.error?.message);
  const report = opened.value!;
  assert.ok(report.id);
  const history = report.evidence.runs.find((r) => r.kind === 'allocator-history')!;
  assert.equal(history.oomPicture?.snapshotPath, join(FIXTURES, 'pytorch-oom-too-large.pickle'));

  const zip = join(dir, 'oom.zip');
  const exported = await call<{ path: string; bytes: number; notes: string[] }>('diagnose.export', { id: report.id, path: zip });
  assert.ok(exported.ok, exported.error?.message);
  assert.ok(!exported.value!.notes.some((n) => /snapshot/.test(n)), exported.value!.notes.join(' | '));

  const view = await call<BundleView>('bundle.open', { path: zip });
  assert.ok(view.ok, view.error?.message);
  const v = view.value!;
  assert.equal(v.manifest.contents.diagnosis, 'diagnosis.json');
  assert.equal(v.manifest.redacted, true);
  assert.equal(v.diagnosis?.verdict.sentence, report.verdict.sentence);
  assert.equal(v.recorded.device, 'NVIDIA H100 80GB HBM3');
  const placed = v.diagnosis!.evidence.runs.find((r) => r.kind === 'allocator-history')!.oomPicture!.snapshotPath!;
  assert.ok(placed.startsWith(join(dir, 'state', 'bundles')), placed);
  // Redacted, the snapshot is copied through the redactor (its FRAME hints left out): the same values, its paths not under a home.
  assert.deepEqual(unpickle(readFileSync(placed)), unpickle(readFileSync(join(FIXTURES, 'pytorch-oom-too-large.pickle'))));
  assert.ok(!v.notes.some((n) => /no run result|no launch plan/.test(n)), v.notes.join(' | '));
  const memory = await call<{ timelines: unknown[] }>('memory.open', { path: placed });
  assert.ok(memory.ok && memory.value!.timelines.length > 0, memory.error?.message);
});

test('the user’s own variables stay out of a bundle unless they are CUDA’s; the diagnosis’s own changes stay in', async () => {
  const report = JSON.parse(readFileSync(join(FIXTURES, 'cuda-visible-devices.json'), 'utf8')) as DiagnosisReport;
  report.program.envChanges = { ...report.program.envChanges, HF_TOKEN: 'hf_secret_value' };
  report.steps[1]!.envChanges = { HF_TOKEN: 'hf_secret_value', CUDA_LAUNCH_BLOCKING: '1' };
  const file = join(dir, 'with-token.json');
  writeFileSync(file, JSON.stringify(report));
  const opened = await call<DiagnosisReport>('diagnose.open', { path: file });
  const zip = join(dir, 'token.zip');
  assert.ok((await call('diagnose.export', { id: opened.value!.id, path: zip })).ok);
  const raw = readFileSync(zip);
  assert.ok(!raw.includes('hf_secret_value'), 'the token is not in the zip');
  const view = (await call<BundleView>('bundle.open', { path: zip })).value!;
  assert.equal(view.diagnosis!.program.envChanges['HF_TOKEN'], HIDDEN_VALUE);
  assert.equal(view.diagnosis!.program.envChanges['CUDA_VISIBLE_DEVICES'], '7');
  assert.equal(view.diagnosis!.steps[1]!.envChanges['CUDA_LAUNCH_BLOCKING'], '1');
});

test('a bundle whose diagnosis is not one is refused, naming the entry; an unknown id is said, not guessed', async () => {
  const bad = await writeZip(dir, 'bad.zip', [
    { name: 'manifest.json', data: bundleManifest({ contents: { diagnosis: 'diagnosis.json' } }) },
    { name: 'diagnosis.json', data: JSON.stringify({ schema: 1, verdict: { kind: 'clean', sentence: 'trust me' } }) },
  ]);
  const reply = await call('bundle.open', { path: bad });
  assert.equal(reply.ok, false);
  assert.match(reply.error!.message, /diagnosis\.json is not a diagnosis report/);
  const unknown = await call('diagnose.export', { id: 'not-held', path: join(dir, 'x.zip') });
  assert.match(unknown.error!.message, /no longer held/);
  const notJson = join(dir, 'not.json');
  writeFileSync(notJson, '{"schema": 1,');
  assert.match((await call('diagnose.open', { path: notJson })).error!.message, /is not valid JSON/);
});

test('gpu-workbench diagnose --bundle writes the bundle after the report, and bundle inspect reads it', async () => {
  const zip = join(dir, 'cli.zip');
  const r = await runCli(['diagnose', '--bundle', zip, '--', process.execPath, '-e', 'process.exit(3)'], {
    env: { GPU_WORKBENCH_STATE_DIR: join(dir, 'state') },
  });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /Bundle written: .*cli\.zip/);
  const inspect = await runCli(['bundle', 'inspect', zip]);
  assert.equal(inspect.code, 0, inspect.stderr);
  assert.match(inspect.stdout, /exited with code 3/);
  assert.match(inspect.stdout, /diagnosis\.json/);
  const missing = await runCli(['diagnose', '--bundle', '/no/such/folder/x.zip', '--', process.execPath, '-e', '0']);
  assert.equal(missing.code, 64);
  assert.match(missing.stderr, /the folder \/no\/such\/folder does not exist/);
});

test('a report from outside cannot name the file beside it that an export ships: only a .pickle that begins as a pickle is its snapshot', async () => {
  const report = JSON.parse(readFileSync(join(FIXTURES, 'pytorch-oom-too-large.json'), 'utf8')) as DiagnosisReport;
  const picture = () => report.evidence.runs.find((r) => r.kind === 'allocator-history')!.oomPicture!;
  const folder = mkdtempSync(join(dir, 'beside-'));
  writeFileSync(join(folder, '.env'), 'AWS_SECRET_ACCESS_KEY=very-secret\n');
  writeFileSync(join(folder, 'notes.pickle'), 'AWS_SECRET_ACCESS_KEY=very-secret\n');
  for (const named of ['x/.env', '/elsewhere/notes.pickle']) {
    picture().snapshotPath = named;
    writeFileSync(join(folder, 'report.json'), JSON.stringify(report));
    const opened = await call<DiagnosisReport>('diagnose.open', { path: join(folder, 'report.json') });
    assert.ok(opened.ok, opened.error?.message);
    const snapshot = opened.value!.evidence.runs.find((r) => r.kind === 'allocator-history')!.oomPicture!.snapshotPath;
    assert.equal(snapshot, null, `${named} is not a snapshot`);
    const zip = join(folder, 'out.zip');
    assert.ok((await call('diagnose.export', { id: opened.value!.id, path: zip, redact: false })).ok);
    assert.ok(!readFileSync(zip).includes('very-secret'), `${named}: nothing beside the report went into the bundle`);
  }
  // The real snapshot, named by the report, beside it: found.
  writeFileSync(join(folder, 'join.pickle'), readFileSync(join(FIXTURES, 'pytorch-oom-too-large.pickle')));
  picture().snapshotPath = '/home/someone/join.pickle';
  writeFileSync(join(folder, 'report.json'), JSON.stringify(report));
  const opened = await call<DiagnosisReport>('diagnose.open', { path: join(folder, 'report.json') });
  assert.equal(opened.value!.evidence.runs.find((r) => r.kind === 'allocator-history')!.oomPicture!.snapshotPath, join(folder, 'join.pickle'));
});

test('a redacted bundle’s snapshot names no home folder: its stack frames’ paths are redacted; without redaction they stay', async () => {
  // The recorded snapshot as if the program had lived in this user's home: its strings rewritten the same way.
  const home = homedir();
  const fixture = new Uint8Array(readFileSync(join(FIXTURES, 'pytorch-oom-too-large.pickle')));
  const mine = redactPickleStrings(fixture, (s) => s.replaceAll(/\/[^\s'"]*\/samples\/programs/g, `${home}/proj`));
  assert.ok(Buffer.from(mine).includes(`${home}/proj/pytorch-oom-too-large/join.py`));
  const folder = mkdtempSync(join(dir, 'home-'));
  writeFileSync(join(folder, 'report.pickle'), mine);
  writeFileSync(join(folder, 'report.json'), readFileSync(join(FIXTURES, 'pytorch-oom-too-large.json')));
  const opened = await call<DiagnosisReport>('diagnose.open', { path: join(folder, 'report.json') });
  assert.ok(opened.ok, opened.error?.message);
  const snapshotIn = async (redact: boolean) => {
    const zip = join(folder, `${redact}.zip`);
    const exported = await call<{ notes: string[] }>('diagnose.export', { id: opened.value!.id, path: zip, redact });
    assert.ok(exported.ok, exported.error?.message);
    const view = (await call<BundleView>('bundle.open', { path: zip })).value!;
    return readFileSync(view.diagnosis!.evidence.runs.find((r) => r.kind === 'allocator-history')!.oomPicture!.snapshotPath!);
  };
  const redacted = await snapshotIn(true);
  assert.ok(!redacted.includes(home), 'no byte of the home folder');
  assert.ok(redacted.includes('~/proj/pytorch-oom-too-large/join.py'));
  assert.ok((await snapshotIn(false)).includes(`${home}/proj/pytorch-oom-too-large/join.py`), '--no-redact keeps it');
});

test('a redacted bundle’s snapshot hides the user’s name in a path outside any home folder, as the report’s text does', async () => {
  const user = userInfo().username;
  const fixture = new Uint8Array(readFileSync(join(FIXTURES, 'pytorch-oom-too-large.pickle')));
  const mine = redactPickleStrings(fixture, (s) => s.replaceAll(/\/[^\s'"]*\/samples\/programs/g, `/scratch/${user}/proj`));
  const folder = mkdtempSync(join(dir, 'scratch-'));
  writeFileSync(join(folder, 'report.pickle'), mine);
  writeFileSync(join(folder, 'report.json'), readFileSync(join(FIXTURES, 'pytorch-oom-too-large.json')));
  const opened = await call<DiagnosisReport>('diagnose.open', { path: join(folder, 'report.json') });
  const zip = join(folder, 'scratch.zip');
  assert.ok((await call('diagnose.export', { id: opened.value!.id, path: zip, redact: true })).ok);
  const view = (await call<BundleView>('bundle.open', { path: zip })).value!;
  const placed = view.diagnosis!.evidence.runs.find((r) => r.kind === 'allocator-history')!.oomPicture!.snapshotPath!;
  const redacted = readFileSync(placed);
  assert.ok(!redacted.includes(`/scratch/${user}/`), 'no path with the user’s name');
  assert.ok(redacted.includes('/scratch/<user>/proj/pytorch-oom-too-large/join.py'));
  const memory = await call<{ timelines: unknown[] }>('memory.open', { path: placed });
  assert.ok(memory.ok && memory.value!.timelines.length > 0, memory.error?.message);
});

test('a hostile snapshot beside a report costs the redaction’s reader, not the host: one 200 MB string, and a length past the end', async () => {
  const folder = mkdtempSync(join(dir, 'hostile-snapshot-'));
  writeFileSync(join(folder, 'report.json'), readFileSync(join(FIXTURES, 'pytorch-oom-too-large.json')));
  const huge = 200 * 2 ** 20;
  const head = Buffer.alloc(11);
  head.set([0x80, 4, 0x8d]);
  head.writeBigUInt64LE(BigInt(huge), 3);
  const cases: [string, () => void][] = [
    [
      'one string of 200 MB',
      () => writeFileSync(join(folder, 'report.pickle'), Buffer.concat([head, Buffer.alloc(huge, `${homedir()}/`), Buffer.from([0x2e])])),
    ],
    ['a string longer than the file', () => writeFileSync(join(folder, 'report.pickle'), Buffer.concat([head, Buffer.from('short'), Buffer.from([0x2e])]))],
  ];
  for (const [what, make] of cases) {
    make();
    const opened = await call<DiagnosisReport>('diagnose.open', { path: join(folder, 'report.json') });
    assert.ok(opened.ok, opened.error?.message);
    const zip = join(folder, 'out.zip');
    const exported = await call<{ notes: string[] }>('diagnose.export', { id: opened.value!.id, path: zip });
    assert.ok(exported.ok, `${what}: ${exported.error?.message}`);
    const left = exported.value!.notes.find((n) => /snapshot .* is not in the bundle/.test(n));
    const raw = readFileSync(zip);
    // Either redacted whole, or left out with the reader's words: never the home folder, never the host's end.
    assert.ok(left || !raw.includes(homedir()), `${what}: ${exported.value!.notes.join(' | ')}`);
    console.log(`# ${what}: ${left ?? 'redacted whole'}`);
    if (what === 'a string longer than the file') assert.match(left ?? '', /could not be redacted: the pickle ends inside a string/);
    const info = await call('app.info', {});
    assert.ok(info.ok, `${what}: the host still answers`);
  }
});
