import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { nvrtcHeaderNotes, parseCompilerLog } from '../../core/compile/diagnostics';
import { kernelFacts, withSharedDiagnostics } from '../../core/compile/compile-result';
import { parsePtxasInfo } from '../../core/compile/resource-usage';
import { ROOT } from '../helpers/cli';

// Real logs from nvcc 13.0 (-cubin -arch=sm_90 -lineinfo -Xptxas -v) on the sources beside them.
const fixture = (name: string) => readFileSync(join(ROOT, 'test/fixtures/logs', name), 'utf8');

test('nvcc: an error and a warning from the front end, columns recovered against the source', () => {
  const src = fixture('syntax.cu');
  const d = parseCompilerLog(fixture('nvcc-syntax.log'), { 'syntax.cu': src });
  assert.equal(d.length, 2);
  assert.deepEqual(d[0], { file: 'syntax.cu', line: 4, column: 3, severity: 'error', message: 'expected a ";"', code: null, source: 'frontend' });
  assert.deepEqual(
    { ...d[1], message: undefined },
    { file: 'syntax.cu', line: 3, column: 7, severity: 'warning', message: undefined, code: '177-D', source: 'frontend' },
  );
  assert.equal(src.split('\n')[2]![d[1]!.column - 1], 'i');
});

test('nvcc: the preprocessor reports a missing header with line and column', () => {
  const d = parseCompilerLog(fixture('nvcc-multi.log'));
  assert.deepEqual(d, [
    { file: 'multi.cu', line: 1, column: 10, severity: 'error', message: 'missing_header.h: No such file or directory', code: null, source: 'preprocessor' },
  ]);
});

test('ptxas: an error with no line, and per-kernel resources', () => {
  const d = parseCompilerLog(fixture('nvcc-bigshared.log'));
  assert.equal(d.length, 1);
  assert.equal(d[0]!.source, 'ptxas');
  assert.match(d[0]!.message, /uses too much shared data \(0x61a80 bytes, 0xc000 max\)/);
  const usage = parsePtxasInfo(fixture('nvcc-warn.log'));
  assert.deepEqual(
    usage.map((u) => [u.symbol, u.registers, u.sharedBytes, u.stackFrameBytes, u.barriers]),
    [
      ['_Z6reducePKfPfj', 10, 1024, 0, 1],
      ['_Z1kPfi', 32, 0, 256, 0],
    ],
  );
  assert.equal(usage[1]!.cumulativeStackBytes, 256);
});

test('older ptxas formats with cmem are read too', () => {
  const [u] = parsePtxasInfo(
    [
      "ptxas info    : Compiling entry function '_Z3fooPf' for 'sm_80'",
      'ptxas info    : Function properties for _Z3fooPf',
      '    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads',
      'ptxas info    : Used 255 registers, 368 bytes cmem[0], 16 bytes cmem[2]',
    ].join('\n'),
  );
  assert.deepEqual([u!.registers, u!.constantBytes, u!.spillStoreBytes, u!.arch], [255, { '0': 368, '2': 16 }, 4, 'sm_80']);
});

test('lines that are not diagnostics are ignored; nvcc fatal errors are kept', () => {
  assert.deepEqual(parseCompilerLog('Remark: The warnings can be suppressed\n\n1 error detected'), []);
  assert.equal(parseCompilerLog("nvcc fatal   : Unsupported gpu architecture 'compute_12'")[0]!.message, "Unsupported gpu architecture 'compute_12'");
});

test('NVRTC logs (recorded on the H200) parse to the same places as nvcc logs', () => {
  const src = fixture('syntax.cu');
  const d = parseCompilerLog(fixture('nvrtc-syntax.log'), { 'syntax.cu': src });
  assert.deepEqual(
    d.map((x) => [x.line, x.column, x.severity, x.code]),
    [
      [4, 3, 'error', null],
      [3, 7, 'warning', '177-D'],
    ],
  );
  const missing = parseCompilerLog(fixture('nvrtc-multi.log'), { 'multi.cu': fixture('multi.cu') });
  assert.deepEqual([missing[0]!.line, missing[0]!.severity], [1, 'error']);
  assert.match(missing[0]!.message, /could not open source file "missing_header.h"/);
  // NVRTC's ptxas prints "ptxas         .     0 bytes stack frame": the same facts as nvcc's.
  const usage = parsePtxasInfo(fixture('nvrtc-warn.log'));
  assert.deepEqual(
    usage.map((u) => [u.symbol, u.registers, u.sharedBytes, u.stackFrameBytes]),
    [
      ['_Z6reducePKfPfj', 10, 1024, 0],
      ['_Z1kPfi', 32, 0, 256],
    ],
  );
});

test('more than 48 KiB of static shared memory is an error from the workbench when NVRTC does not say it', () => {
  // NVRTC's ptxas accepts it (see nvrtc-bigshared.log) and emits a cubin that can never launch.
  assert.deepEqual(parseCompilerLog(fixture('nvrtc-bigshared.log')), []);
  const [u] = parsePtxasInfo(fixture('nvrtc-bigshared.log'));
  const kernels = kernelFacts(fixture('bigshared.cu'), [u!], ['_Z1kPf']);
  const [d] = withSharedDiagnostics([], kernels, 'bigshared.cu');
  assert.equal(d!.severity, 'error');
  assert.equal(d!.line, 1);
  assert.match(d!.message, /390\.63 KiB \(400,000 bytes\) of static shared memory/);
  assert.deepEqual(
    withSharedDiagnostics([], kernelFacts(fixture('warn.cu'), parsePtxasInfo(fixture('nvrtc-warn.log')), ['_Z6reducePKfPfj', '_Z1kPfi']), 'warn.cu'),
    [],
  );
});

test('NVRTC: a standard header it does not ship gets a note when the feature is built in, not otherwise', () => {
  // The form NVRTC 13 prints (test/fixtures records one for a missing header on an H200).
  const log = [
    'k.cu(3): catastrophic error: could not open source file "cassert" (no directories in search list)',
    '  #include <cassert>',
    '                    ^',
    '',
    '1 catastrophic error detected in the compilation of "k.cu".',
  ].join('\n');
  const parsed = parseCompilerLog(log, { 'k.cu': '// a kernel\n\n#include <cassert>\n' });
  const notes = nvrtcHeaderNotes(parsed);
  assert.equal(notes.length, 1);
  assert.deepEqual([notes[0]!.line, notes[0]!.severity, notes[0]!.code], [3, 'info', 'nvrtc-std-header']);
  assert.match(notes[0]!.message, /assert\(\) needs no include under it.*#ifndef __CUDACC_RTC__/);
  const other = parseCompilerLog('k.cu(1): catastrophic error: could not open source file "mylib.h" (no directories in search list)');
  assert.deepEqual(nvrtcHeaderNotes(other), [], 'a header of the user’s own gets no such note');
});
