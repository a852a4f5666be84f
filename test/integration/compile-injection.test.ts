import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { compileOptionsSchema, nvccCommandArguments } from '../../core/compile/compile-options';
import { findNvcc } from '../../main/compile/nvcc';
import { createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { createWorkbench } from '../../main/workbench';
import { runCli } from '../helpers/cli';

// nvcc hands its sub-commands to `sh -c`: a define or an include path that reached its command line as
// written would run commands. Each way in — the CLI, the API, a plan file — must leave the marker unmade.
const dir = mkdtempSync(join(tmpdir(), 'wb-injection-'));
const marker = join(dir, 'PWNED');
const payloads = [`X=$(touch ${marker})`, `Y=\`touch ${marker}\``, `Z=1;touch ${marker}`, `W=1 && touch ${marker} #`];
const nvcc = findNvcc();
const source = join(dir, 'k.cu');
// Compiles only when the defines arrived: the values themselves are inert text in the preprocessor.
writeFileSync(
  source,
  '#if !defined(X) || !defined(Y) || !defined(Z) || !defined(W)\n#error the defines did not arrive\n#endif\n__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\n',
);
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
after(() => workbench.dispose());

test('CLI: shell text in defines compiles as text under nvcc and runs nothing; in an include path it is refused', async (t) => {
  if (!(await nvcc).found) return t.skip('nvcc is not installed here');
  const r = await runCli(['compile', source, '--backend', 'nvcc', '--arch', 'sm_90', ...payloads.flatMap((p) => ['-D', p])]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(existsSync(marker), false, 'a define ran a command');
  for (const path of [`/tmp/$(touch ${marker})`, `/tmp/\`touch ${marker}\``, '/my headers']) {
    const refused = await runCli(['compile', source, '--backend', 'nvcc', '--arch', 'sm_90', '-I', path]);
    assert.equal(refused.code, 64, refused.stdout);
    assert.match(refused.stdout + refused.stderr, /an include path may hold only letters, digits/);
  }
  assert.equal(existsSync(marker), false);
});

test('API: the same payloads through compile.run', async (t) => {
  if (!(await nvcc).found) return t.skip('nvcc is not installed here');
  const handlers = createHandlers(workbench, 'serve');
  const text = '#if !defined(X)\n#error no X\n#endif\n__global__ void k() {}\n';
  const ok = (await dispatch(handlers, 'compile.run', {
    source: text,
    sourceName: 'k.cu',
    options: { arch: 'sm_90', defines: payloads },
    backend: 'nvcc',
  })) as {
    ok: boolean;
    value?: { ok: boolean; log: string };
  };
  assert.equal(ok.ok, true, JSON.stringify(ok));
  assert.equal(ok.value?.ok, true, ok.value?.log);
  const refused = await dispatch(handlers, 'compile.run', {
    source: text,
    sourceName: 'k.cu',
    options: { arch: 'sm_90', includePaths: [`/tmp/$(touch ${marker})`] },
    backend: 'nvcc',
  });
  assert.equal(refused.ok, false);
  const flag = await dispatch(handlers, 'compile.run', {
    source: text,
    sourceName: 'k.cu',
    options: { arch: 'sm_90', flags: ['-Xcompiler', `-fplugin=${marker}`] },
    backend: 'nvcc',
  });
  assert.equal(flag.ok, false, 'a field outside the allow-list is refused, not ignored');
  assert.equal(existsSync(marker), false);
});

test('plan file: an include path with shell text is refused before anything runs; unknown compiler options too', async () => {
  const plan = (options: object) => {
    const path = join(dir, `plan-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(
      path,
      JSON.stringify({
        version: 1,
        kernels: [{ id: 'k', entry: 'k', sourceFile: 'k.cu', options }],
        buffers: [{ name: 'p', type: 'f32', count: 32 }],
        steps: [
          { op: 'alloc', buffer: 'p' },
          { op: 'launch', kernel: 'k', grid: [1, 1, 1], block: [32, 1, 1], args: [{ buffer: 'p' }] },
          { op: 'free', buffer: 'p' },
        ],
      }),
    );
    return path;
  };
  for (const options of [{ includePaths: [`$(touch ${marker})`] }, { defines: [`A=1\ntouch ${marker}`] }, { extraFlags: ['-Xcompiler', '-fplugin=x'] }]) {
    const r = await runCli(['run', '--plan', plan(options)]);
    assert.equal(r.code, 64, r.stdout + r.stderr);
    assert.match(r.stdout, /The launch plan is not valid/);
  }
  assert.equal(existsSync(marker), false);
});

test('compile.cached: null before the source is compiled, the cached result after, without compiling again', async (t) => {
  if (!(await nvcc).found) return t.skip('nvcc is not installed here');
  const handlers = createHandlers(workbench, 'serve');
  const request = {
    source: `__global__ void k(float* p) { p[0] = ${Date.now()}; }\n`,
    sourceName: 'k.cu',
    options: { arch: 'sm_90' },
    backend: 'nvcc' as const,
  };
  const miss = (await dispatch(handlers, 'compile.cached', request)) as { ok: boolean; value?: unknown };
  assert.deepEqual(miss, { ok: true, value: null });
  assert.equal(((await dispatch(handlers, 'compile.run', request)) as { ok: boolean }).ok, true);
  const hit = (await dispatch(handlers, 'compile.cached', request)) as { ok: boolean; value: { ok: boolean; cached: boolean } | null };
  assert.equal(hit.value?.cached, true);
  assert.equal(hit.value?.ok, true);
});

test('sources named like options (--run.cu, -odir.cu) compile as files: nvcc reads no option from the name and writes no other file', async (t) => {
  if (!(await nvcc).found) return t.skip('nvcc is not installed here');
  const folder = mkdtempSync(join(tmpdir(), 'wb-option-names-'));
  const kernel = '__global__ void k(float* p) { p[threadIdx.x] = 1.0f; }\n';
  for (const name of ['--run.cu', '-odir.cu']) {
    writeFileSync(join(folder, name), kernel);
    // The worker's own command line, run in a folder the test can look at afterwards.
    mkdirSync(join(folder, 'keep'), { recursive: true });
    const args = nvccCommandArguments(compileOptionsSchema.parse({ arch: 'sm_90' }), { source: name, output: 'kernel.cubin', keepDir: 'keep' });
    execFileSync((await nvcc).path!, args, { cwd: folder, stdio: 'pipe' });
    assert.deepEqual(
      readdirSync(folder)
        .filter((f) => !f.endsWith('.cu') && f !== 'cache')
        .sort(),
      ['keep', 'kernel.cubin'],
    );
    rmSync(join(folder, 'kernel.cubin'));
    // And through the CLI, which compiles in the worker.
    const r = await runCli(['compile', join(folder, name), '--backend', 'nvcc', '--arch', 'sm_90'], {
      env: { GPU_WORKBENCH_CACHE_DIR: join(folder, 'cache') },
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
  }
  assert.equal(existsSync(join(folder, 'dir')) || existsSync(join(folder, 'dir.cu')), false);
});
