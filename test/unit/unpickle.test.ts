import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

import { generateSnapshotPickle } from '../../bench/snapshot-pickle';
import { buildSnapshotModel } from '../../core/memory/snapshot-model';
import { DEFAULT_UNPICKLE_LIMITS, PickleTuple, unpickle, UnpickleError, type PickleValue } from '../../core/memory/unpickle';
import { ROOT } from '../helpers/cli';

const fixture = (name: string) => new Uint8Array(readFileSync(join(ROOT, 'test/fixtures/pickles', name)));
const get = (v: PickleValue, ...path: (string | number)[]): PickleValue =>
  path.reduce<PickleValue>((at, k) => (at instanceof Map ? at.get(k)! : (at as PickleValue[])[k as number]!), v);

test('snapshot-shaped pickles of protocols 2 to 5 read the same: dicts as Maps, big integers exact, tuples, sets, bytes', () => {
  for (const protocol of [2, 3, 4, 5]) {
    const s = unpickle(fixture(`snapshot-p${protocol}.pickle`));
    assert.ok(s instanceof Map, `protocol ${protocol}`);
    assert.equal(get(s, 'segments', 0, 'total_size'), 20_971_520);
    assert.equal(get(s, 'segments', 0, 'address'), 139_637_976_727_552);
    assert.equal(get(s, 'device_traces', 0, 1, 'action'), 'alloc');
    assert.equal(get(s, 'device_traces', 0, 2, 'size'), 2 ** 40);
    assert.equal(get(s, 'device_traces', 0, 0, 'time_us'), 1_700_000_000_000_000);
    assert.equal(get(s, 'big'), 2n ** 70n, 'past 2^53: BigInt, exact');
    assert.equal(get(s, 'negative'), -(2n ** 64n) - 5n);
    assert.equal(get(s, 'ratio'), 0.25);
    assert.equal(get(s, 'allocator_settings', 'PYTORCH_CUDA_ALLOC_CONF'), null);
    assert.equal(get(s, 'allocator_settings', 'expandable_segments'), false);
    assert.ok(get(s, 'tuple') instanceof PickleTuple);
    assert.deepEqual([...(get(s, 'tuple') as PickleTuple)], [1, 'two', 3]);
    if (protocol >= 4) {
      assert.deepEqual([...(get(s, 'set') as Set<PickleValue>)].sort(), [1, 2]);
      assert.deepEqual([...(get(s, 'bytes') as Uint8Array)], [0, 1]);
    }
    // The same frames list, written once and referred to through the memo, is one object here too.
    assert.equal(get(s, 'segments', 0, 'blocks', 0, 'frames'), get(s, 'device_traces', 0, 0, 'frames'), `protocol ${protocol}: memo shared`);
    assert.equal(get(s, 'device_traces', 0, 0, 'frames', 0, 'filename'), 'train.py');
  }
});

test('a pickle that asks to run code is refused, and nothing runs', () => {
  const marker = '/tmp/gpu-workbench-pwned';
  assert.throws(
    () => unpickle(fixture('evil-reduce.pickle')),
    (e: unknown) => e instanceof UnpickleError && /asks to run code \((STACK_)?GLOBAL\).*nothing was run/.test(e.message),
  );
  assert.throws(() => unpickle(fixture('evil-global.pickle')), /asks to run code \(GLOBAL\)/);
  assert.equal(existsSync(marker), false);
});

test('hostile shapes: deep nesting, a length past the end, truncation, protocol 6, not a pickle — each a clear message', () => {
  const cases: [string | Uint8Array, RegExp][] = [
    ['deep.pickle', /nests deeper than 256 levels/],
    ['length-past-end.pickle', /ends early/],
    ['truncated.pickle', /ends early|ends inside/],
    ['protocol-6.pickle', /protocol 6 is not supported \(2 to 5 are\)/],
    [new Uint8Array([0x7b, 0x7d]), /not a pickle of protocol 2 or later/],
    [new Uint8Array([0x80, 0x04, 0x4e, 0x4e, 0x2e]), /stops with other than one value/],
    [new Uint8Array([0x80, 0x04, 0x68, 0x07, 0x2e]), /memo entry 7, which it never stored/],
  ];
  for (const [input, message] of cases) {
    const bytes = typeof input === 'string' ? fixture(input) : input;
    assert.throws(
      () => unpickle(bytes),
      (e: unknown) => e instanceof UnpickleError && message.test(e.message),
      String(input),
    );
  }
});

test('caps hold: bytes and the number of values', () => {
  const s = fixture('snapshot-p4.pickle');
  assert.throws(() => unpickle(s, { maxBytes: 100, maxDepth: 256, maxItems: 1e9 }), /over the limit of 100/);
  assert.throws(() => unpickle(s, { maxBytes: 1e9, maxDepth: 256, maxItems: 20 }), /more than 20 values/);
});

test('5,000 random mutations of a snapshot: each read or refused with UnpickleError, never another exception', () => {
  const base = fixture('snapshot-p4.pickle');
  let state = 12345;
  const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0);
  let refused = 0;
  for (let i = 0; i < 5000; i++) {
    const bytes = base.slice(0, next() % 4 === 0 ? next() % base.length : base.length);
    for (let k = 0; k < 1 + (next() % 4); k++) bytes[2 + (next() % (bytes.length - 2))] = next() & 0xff;
    try {
      unpickle(bytes, { maxBytes: 1e6, maxDepth: 64, maxItems: 1e5 });
    } catch (error) {
      assert.ok(error instanceof UnpickleError, `mutation ${i}: ${String(error)}`);
      refused++;
    }
  }
  assert.ok(refused > 1000, `${refused} refused`);
});

test('one mark holding 500,000 values is read (appended one by one, not spread onto the call stack)', () => {
  const n = 500_000;
  const bytes = new Uint8Array(2 + 2 + n + 2);
  bytes.set([0x80, 0x04, 0x5d, 0x28]); // PROTO 4, EMPTY_LIST, MARK
  bytes.fill(0x4e, 4, 4 + n); // NONE × n
  bytes.set([0x65, 0x2e], 4 + n); // APPENDS, STOP
  assert.equal((unpickle(bytes) as PickleValue[]).length, n);
});

test('every snapshot PyTorch recorded for the fixtures (H100, H200) reads and models under the default limits', () => {
  const FIXTURES = join(ROOT, 'test/fixtures');
  // test/fixtures/pickles holds made-up and hostile pickles; every other pickle there was recorded by PyTorch.
  const recorded = readdirSync(FIXTURES, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.pickle') && !f.startsWith('pickles'))
    .map((f) => join(FIXTURES, f));
  assert.ok(recorded.length >= 6, recorded.join(', '));
  for (const file of recorded) {
    const model = buildSnapshotModel(unpickle(new Uint8Array(readFileSync(file)), DEFAULT_UNPICKLE_LIMITS));
    assert.ok(model.devices.length > 0 && model.frames.length > 0, relative(ROOT, file));
  }
  // And a long one: 100,000 trace entries written as torch writes them, frames shared through the memo (62 times expanded).
  assert.ok(buildSnapshotModel(unpickle(generateSnapshotPickle({ entries: 100_000 }))).devices[0]!.count >= 100_000);
});
