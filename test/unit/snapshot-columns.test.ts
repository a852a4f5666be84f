import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { decodeSnapshotColumns, encodeSnapshotColumns, SnapshotColumnsError } from '../../core/memory/snapshot-columns';
import { buildSnapshotModel, type SnapshotModel } from '../../core/memory/snapshot-model';
import { unpickle } from '../../core/memory/unpickle';
import { ROOT } from '../helpers/cli';

// Snapshots recorded by PyTorch on an H100 and an H200, crossing from a reader's process to the host as columns.
const recorded = (path: string): SnapshotModel => buildSnapshotModel(unpickle(new Uint8Array(readFileSync(join(ROOT, path)))));
const FILES = [
  'test/fixtures/snapshots/h100/oom.pickle',
  'test/fixtures/snapshots/h100/leak.pickle',
  'test/fixtures/programs/h200/pytorch-oom-too-large.pickle',
];

const roundTrip = (model: SnapshotModel) => {
  const { header, body } = encodeSnapshotColumns(model);
  return decodeSnapshotColumns(JSON.parse(JSON.stringify(header)), body);
};

test('a recorded snapshot comes back whole: frames, stacks, every device column, segments and their blocks, the settings', () => {
  for (const file of FILES) {
    const model = recorded(file);
    // The settings come back as plain objects (the unpickler makes them without a prototype).
    assert.deepEqual(roundTrip(model), { ...model, allocatorSettings: JSON.parse(JSON.stringify(model.allocatorSettings)) }, file);
  }
});

test('a string shared by every frame travels once: the answer grows with distinct strings, not with references', () => {
  const long = 'x'.repeat(1 << 20);
  const model: SnapshotModel = {
    frames: Array.from({ length: 5000 }, (_, i) => ({ filename: long, line: i, name: long })),
    stacks: [Int32Array.from([0, 1, 2])],
    userFrame: Int32Array.from([0]),
    devices: [],
    segments: [],
    allocatorSettings: {},
  };
  const { header, body } = encodeSnapshotColumns(model);
  assert.equal(header.strings.length, 1);
  assert.ok(JSON.stringify(header).length < 1.1 * 2 ** 20, 'one copy of the string');
  assert.ok(body.byteLength < 100_000);
  assert.equal(decodeSnapshotColumns(header, body).frames[4999]!.filename.length, 1 << 20);
});

test('columns from another process are checked: an index outside its table, a short body, a column out of place, a huge count', () => {
  const { header, body } = encodeSnapshotColumns(recorded(FILES[0]!));
  const copy = () => JSON.parse(JSON.stringify(header)) as typeof header;
  const refused = (h: unknown, b: Uint8Array, pattern: RegExp) =>
    assert.throws(
      () => decodeSnapshotColumns(h, b),
      (e: unknown) => e instanceof SnapshotColumnsError && pattern.test(e.message),
    );
  // A frame's file pointing past the string table.
  const badFrame = body.slice();
  new Int32Array(badFrame.buffer, 0, 1)[0] = header.strings.length + 7;
  refused(header, badFrame, /frame file\[0\] is \d+, outside/);
  refused(header, body.slice(0, body.byteLength - 8), /runs past the end/);
  const swapped = copy();
  [swapped.columns[0], swapped.columns[2]] = [swapped.columns[2]!, swapped.columns[0]!];
  refused(swapped, body, /expected frame\.file/);
  const huge = copy();
  huge.frames = 2 ** 40;
  refused(huge, body, /expected frame\.file \(i32 × 1099511627776\)|runs past/);
  refused({ format: 'other' }, body, /not a snapshot-columns-1 header/);
  refused({ ...copy(), strings: [1, 2] }, body, /string table/);
  refused({ ...copy(), allocatorSettings: 'x'.repeat(70_000) }, body, /allocator settings/);
});
