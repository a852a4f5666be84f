import assert from 'node:assert/strict';
import { test } from 'node:test';

import { compileOptionsSchema, nvccCommandArguments } from '../../core/compile/compile-options';
import { fileArgument, programArgv } from '../../core/process/argument-words';
import { DEFAULT_SANITIZER_OPTIONS, sanitizeProgramArguments } from '../../core/sanitizer/sanitizer-args';

test('a file name is a path on a command line: one beginning with - is never an option', () => {
  assert.equal(fileArgument('--run.cu'), './--run.cu');
  assert.equal(fileArgument('-odir.cu'), './-odir.cu');
  assert.equal(fileArgument('k.cu'), './k.cu');
  for (const kept of ['/tmp/-x.cu', './-x.cu', '../-x.cu']) assert.equal(fileArgument(kept), kept);
});

test("nvcc's command line passes the user's source as ./NAME, after every option", () => {
  const options = compileOptionsSchema.parse({ arch: 'sm_90', defines: ['N=4'] });
  for (const source of ['--run.cu', '-odir.cu', 'k.cu']) {
    const args = nvccCommandArguments(options, { source, output: 'kernel.cubin', keepDir: 'keep' });
    assert.deepEqual(args, [
      '-cubin',
      '-arch=sm_90',
      '-lineinfo',
      '-Xptxas',
      '-v',
      '-std=c++17',
      '-include',
      'workbench-defines.h',
      '-keep',
      '-keep-dir',
      './keep',
      '-o',
      './kernel.cubin',
      `./${source}`,
    ]);
  }
  assert.equal(nvccCommandArguments(compileOptionsSchema.parse({ arch: 'compute_90' }), { source: '-x.cu', output: 'kernel.ptx', keepDir: 'keep' })[0], '-ptx');
});

test("compute-sanitizer's target and a program run through sh: a name beginning with - is the file in the working folder", () => {
  assert.deepEqual(programArgv(['--log-file', '/etc/passwd']), ['./--log-file', '/etc/passwd']);
  assert.deepEqual(programArgv(['python', '-u', '-odir.py']), ['python', '-u', '-odir.py'], "the program's own arguments are its own");
  assert.deepEqual(programArgv(['/usr/bin/-x']), ['/usr/bin/-x']);
  const args = sanitizeProgramArguments({ ...DEFAULT_SANITIZER_OPTIONS, tool: 'memcheck' }, '/tmp/report-%p.xml', ['--save', 'out.xml']);
  assert.deepEqual(args.slice(-4), ['--save', '/tmp/report-%p.xml', './--save', 'out.xml']);
});
