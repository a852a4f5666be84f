import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { mapPtxLines } from '../../core/compile/ptx-lines';

/** The PTX lines (0-based) one source line compiled to, as the PTX view reads the map. */
const ptxLinesFor = (map: ReturnType<typeof mapPtxLines>, sourceLine: number): number[] =>
  map.sourceLines.flatMap((line, i) => (line === sourceLine ? [i] : []));
import { ROOT } from '../helpers/cli';

// nvcc 13.0's PTX of samples/device-assert/broken.cu with -lineinfo: .loc lines, the .file at the end.
const ptx = readFileSync(join(ROOT, 'test/fixtures/ptx/device-assert-nvcc.ptx'), 'utf8');
const lines = ptx.split('\n');

test('each PTX line maps to the source line of the .loc before it, within its function', () => {
  const map = mapPtxLines(ptx, 'broken.cu');
  assert.match(map.file ?? '', /broken\.cu$/);
  assert.equal(map.sourceLines.length, lines.length);
  const at = (text: string) => map.sourceLines[lines.findIndex((l) => l.includes(text))];
  assert.equal(at('setp.lt.s32'), 9, 'the bounds test is the assert on line 9');
  assert.equal(at('mad.lo.s32'), 8);
  assert.equal(at('st.global.u32'), 10);
  assert.equal(at('ret;'), 11);
  assert.equal(at('call.uni'), 9, 'inside a nested { } block the .loc still holds');
  assert.equal(at('.version'), null, 'outside any function: no source line');
  assert.equal(at('.file'), null);
  // Every source line of the kernel body has PTX, and the assert has the most.
  for (const source of [8, 9, 10, 11]) assert.ok(ptxLinesFor(map, source).length > 0, `line ${source}`);
  assert.ok(ptxLinesFor(map, 9).length > ptxLinesFor(map, 10).length);
});

test('a header’s lines are not mapped: only the compiled file’s', () => {
  const twoFiles = [
    '.visible .entry k()',
    '{',
    '.loc 2 40 1',
    'mov.u32 %r1, 1;',
    '.loc 1 3 1',
    'ret;',
    '}',
    '.file 1 "/tmp/x/kernel.cu"',
    '.file 2 "/usr/local/cuda/include/cuda_fp16.hpp"',
  ].join('\n');
  const map = mapPtxLines(twoFiles, 'kernel.cu');
  assert.deepEqual(map.sourceLines, [null, null, null, null, 3, 3, 3, null, null]);
});

test('a program named otherwise (NVRTC’s own name) maps the file most lines come from', () => {
  const nvrtc = ['.visible .entry k()', '{', '.loc 1 5 1', 'ret;', '}', '.file 1 "<unnamed>"'].join('\n');
  assert.deepEqual(mapPtxLines(nvrtc, 'kernel.cu').sourceLines.slice(2, 4), [5, 5]);
  assert.deepEqual(mapPtxLines('', 'kernel.cu'), { sourceLines: [null], file: null });
});
