import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { snapshotTimelines } from '../../core/memory/memory-open';
import { buildSnapshotModel } from '../../core/memory/snapshot-model';
import { describeInternalRun, isInternalFile, stackRows } from '../../core/memory/stack-rows';
import type { TimelineFrame } from '../../core/memory/timeline';
import { unpickle } from '../../core/memory/unpickle';
import { ROOT } from '../helpers/cli';

const H100 = join(ROOT, 'test/fixtures/snapshots/h100');
const timeline = (name: string) => snapshotTimelines(buildSnapshotModel(unpickle(new Uint8Array(readFileSync(join(H100, name))))), name)[0]!;
const frame = (file: string, name = 'f', line = 1): TimelineFrame => ({ file, line, name });

test('a PyTorch 2.11 stack recorded on the H100: 38 frames read as the user’s line between two folded runs', () => {
  const t = timeline('leak.pickle');
  const stack = t.stacks.find((s) => s.frames.length === 38)!;
  const rows = stackRows(stack.frames, stack.userFrame);
  assert.deepEqual(
    rows.map((r) => r.kind),
    ['internal', 'frame', 'internal'],
  );
  const [before, user, after] = rows as [
    { kind: 'internal'; first: number; count: number },
    { kind: 'frame'; index: number },
    { kind: 'internal'; first: number; count: number },
  ];
  assert.equal(user.index, stack.userFrame);
  assert.equal(stack.frames[user.index]!.file, '<stdin>');
  assert.equal(before.first, 0);
  assert.equal(before.count + 1 + after.count, 38, 'every frame is in a row: none dropped');
  assert.match(describeInternalRun(stack.frames, before.first, before.count), /^\d+ internal frames \(PyTorch, Python and the runtime\)$/);
  assert.match(describeInternalRun(stack.frames, after.first, after.count), /^\d+ internal frames \(Python and the runtime\)$/);
});

test('the classifier: the user’s files are theirs; PyTorch, packages, the standard library, C++ and unknown files are not', () => {
  for (const file of ['train.py', '/home/me/model/train.py', '<stdin>', 'notebook.ipynb', '/work/mytorchutils/x.py'])
    assert.equal(isInternalFile(file), false, file);
  for (const file of [
    '',
    '??',
    'CUDACachingAllocator.cpp',
    'kernel.cu',
    '/usr/lib/python3.12/site-packages/torch/nn/modules/module.py',
    '/opt/venv/lib/python3.12/site-packages/transformers/trainer.py',
    '/usr/lib/python3.12/runpy.py',
    '<frozen runpy>',
    'torch/_tensor.py',
  ])
    assert.equal(isInternalFile(file), true, file);
});

test('one internal frame alone stays a row; the picked user frame is never folded, even when the classifier calls it internal', () => {
  const frames = [frame('??'), frame('train.py'), frame('a.cpp'), frame('b.cpp'), frame('/usr/lib/python3.12/runpy.py')];
  assert.deepEqual(stackRows(frames, 1), [
    { kind: 'frame', index: 0 },
    { kind: 'frame', index: 1 },
    { kind: 'internal', first: 2, count: 3 },
  ]);
  // A stack with no user code: the model picks the runtime's Python frame; it stays visible between the runs.
  assert.deepEqual(stackRows(frames, 4), [
    { kind: 'frame', index: 0 },
    { kind: 'frame', index: 1 },
    { kind: 'internal', first: 2, count: 2 },
    { kind: 'frame', index: 4 },
  ]);
  assert.deepEqual(stackRows([], -1), []);
});
