import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { libcudaOnPath } from '../../main/diagnose/libcuda-on-path';
import { gatherProgramEnvironment, parseProbe } from '../../main/diagnose/program-environment';
import PROBE from '../../main/diagnose/python/probe.py';

// The environment step's probe, run by this machine's python3 over an installation laid out as pip lays one out:
// what it reads are folder names and torch/version.py, never an import of torch or CuPy.
const dir = mkdtempSync(join(tmpdir(), 'wb-probe-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function install(site: string, folders: string[], files: Record<string, string> = {}): string {
  const root = join(dir, site);
  for (const f of folders) mkdirSync(join(root, f), { recursive: true });
  for (const [path, text] of Object.entries(files)) writeFileSync(join(root, path), text);
  return root;
}

const probe = (pythonPath: string) => {
  const r = spawnSync('python3', ['-c', PROBE], { cwd: dir, env: { ...process.env, PYTHONPATH: pythonPath }, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return parseProbe(r.stdout);
};

test('PyTorch’s version and CUDA from torch/version.py, CuPy’s CUDA from its distribution’s name, without importing either', () => {
  const site = install(
    'site',
    ['torch', 'torch-2.11.0+cu130.dist-info', 'cupy_cuda12x-14.0.0.dist-info', 'cupy', 'nvidia_cuda_runtime_cu13-13.0.88.dist-info'],
    {
      'torch/__init__.py': 'raise SystemExit("imported torch")\n',
      'torch/version.py': "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n",
      'cupy/__init__.py': 'raise SystemExit("imported cupy")\n',
    },
  );
  const answer = probe(site);
  assert.equal(answer?.packages.torch?.version, '2.11.0+cu130');
  assert.equal(answer?.packages.torch?.cuda, '13.0');
  assert.deepEqual(answer?.packages.cupy, { version: '14.0.0', cuda: '12' });
  assert.match(answer?.python ?? '', /^3\.\d+\.\d+/);
});

test('the first installation on the path wins, as import finds it; an exact CuPy build names its CUDA; none installed is none', () => {
  const first = install('first', ['cupy_cuda117-10.6.0.dist-info']);
  const second = install('second', ['CuPy_CUDA117-9.0.0.egg-info']);
  assert.deepEqual(probe(`${first}:${second}`)?.packages.cupy, { version: '10.6.0', cuda: '11.7' });
  const empty = install('empty', ['numpy-2.3.0.dist-info']);
  const answer = probe(empty);
  assert.equal(answer?.packages.cupy, undefined);
  // This machine's python3 may have its own torch: only a torch on the given path is asserted above.
  assert.ok(answer?.python);
});

test('each libcuda.so.1 on the program’s LD_LIBRARY_PATH, in the loader’s order, through its links; a FIFO or a folder so named is none', async () => {
  const root = join(dir, 'ld');
  const folder = (name: string) => {
    const path = join(root, name);
    mkdirSync(path, { recursive: true });
    return path;
  };
  const conda = folder('conda/lib');
  writeFileSync(join(conda, 'libcuda.so.535.104.05'), 'not an ELF: only its name is read');
  symlinkSync('libcuda.so.535.104.05', join(conda, 'libcuda.so.1'));
  const fifo = folder('fifo');
  assert.equal(spawnSync('mkfifo', [join(fifo, 'libcuda.so.1')]).status, 0);
  const asFolder = folder('as-folder');
  mkdirSync(join(asFolder, 'libcuda.so.1'));
  const empty = folder('empty');
  const cwd = folder('program');
  writeFileSync(join(cwd, 'libcuda.so.1'), 'a plain copy');
  mkdirSync(join(cwd, 'rel'));
  writeFileSync(join(cwd, 'rel', 'libcuda.so.1'), 'another plain copy');

  // The driver's own file, reached through a folder of its own (as a container's /usr/local/nvidia/lib64 is).
  const system = folder('system');
  writeFileSync(join(system, 'libcuda.so.580.159.04'), 'the driver’s own');
  const nvidia = folder('nvidia/lib64');
  symlinkSync(join(system, 'libcuda.so.580.159.04'), join(nvidia, 'libcuda.so.1'));

  const path = [fifo, asFolder, join(root, 'missing'), empty, conda, '', 'rel', `${conda}/`, nvidia].join(':');
  const found = await libcudaOnPath(path, cwd, join(system, 'libcuda.so.580.159.04'));
  assert.deepEqual(found, [
    { dir: conda, path: join(conda, 'libcuda.so.1'), resolved: join(conda, 'libcuda.so.535.104.05'), version: '535.104.05', driversOwn: false },
    { dir: '', path: join(cwd, 'libcuda.so.1'), resolved: join(cwd, 'libcuda.so.1'), version: null, driversOwn: false },
    { dir: 'rel', path: join(cwd, 'rel', 'libcuda.so.1'), resolved: join(cwd, 'rel', 'libcuda.so.1'), version: null, driversOwn: false },
    // `${conda}/` is the same file again: not listed twice.
    { dir: nvidia, path: join(nvidia, 'libcuda.so.1'), resolved: join(system, 'libcuda.so.580.159.04'), version: '580.159.04', driversOwn: true },
  ]);
  assert.deepEqual(await libcudaOnPath(undefined, cwd, null), [], 'no LD_LIBRARY_PATH: nothing before the loader’s cache');
  assert.deepEqual(await libcudaOnPath('', cwd, null), []);
  // With no time left (the diagnosis's budget spent) the answer is "not looked at"; a hung folder ends the same way.
  assert.equal(await libcudaOnPath(path, cwd, null, 0), null);
});

test('the environment step names the stub libcuda the program’s LD_LIBRARY_PATH puts first, with no GPU and no NVML', async () => {
  const stubs = join(dir, 'cuda/lib64/stubs');
  mkdirSync(stubs, { recursive: true });
  writeFileSync(join(stubs, 'libcuda.so'), 'the toolkit’s link-time stub');
  symlinkSync('libcuda.so', join(stubs, 'libcuda.so.1'));
  const { environment } = await gatherProgramEnvironment({
    argv: ['true'],
    cwd: dir,
    env: { ...process.env, LD_LIBRARY_PATH: stubs },
    nvml: Promise.resolve({ source: null, problem: 'NVML is not on this machine.' }),
    deadlineMs: performance.now() + 10_000,
  });
  const stub = environment.checks.find((c) => c.id === 'libcuda-stub');
  assert.equal(stub?.status, 'fail', JSON.stringify(environment.checks));
  assert.match(stub!.detail, new RegExp(`will load libcuda from ${join(stubs, 'libcuda.so.1').replace(/[.]/g, '\\.')}`));
});
