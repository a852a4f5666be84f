import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { makeRedactor } from '../../core/bundle/redact';
import { PickleRedactionError, redactPickleStrings, snapshotStringRedaction } from '../../core/memory/redact-pickle';
import { buildSnapshotModel } from '../../core/memory/snapshot-model';
import { PickleTuple, UnpickleError, unpickle, type PickleValue } from '../../core/memory/unpickle';
import { ROOT } from '../helpers/cli';

const read = (path: string) => new Uint8Array(readFileSync(join(ROOT, path)));

/** The value with every string (and bytes value, as Latin-1) passed through `f`: what the redacted pickle must read as. */
function mapStrings(v: PickleValue, f: (s: string) => string): PickleValue {
  if (typeof v === 'string') return f(v);
  if (v instanceof Uint8Array) return new Uint8Array(Buffer.from(f(Buffer.from(v).toString('latin1')), 'latin1'));
  if (v instanceof PickleTuple) return PickleTuple.from(v, (x) => mapStrings(x, f)) as PickleTuple;
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, f));
  if (v instanceof Map) return new Map([...v].map(([k, x]) => [mapStrings(k, f), mapStrings(x, f)]));
  if (v instanceof Set) return new Set([...v].map((x) => mapStrings(x, f)));
  return v;
}

const strings = (v: PickleValue, out: string[] = []): string[] => {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) v.forEach((x) => strings(x, out));
  else if (v instanceof Map) v.forEach((x, k) => (strings(k, out), strings(x, out)));
  else if (v instanceof Set) v.forEach((x) => strings(x, out));
  return out;
};

test('a recorded PyTorch snapshot redacted: every path rewritten, every other value the same, and it still reads as a snapshot', () => {
  const home = '/work/main';
  const redact = (s: string) => s.replaceAll(home, '~');
  for (const path of ['test/fixtures/diagnoses/pytorch-oom-too-large.pickle', 'test/fixtures/snapshots/h100/oom.pickle']) {
    const original = read(path);
    const before = unpickle(original);
    assert.ok(
      strings(before).some((s) => s.includes('/')),
      `${path} names files`,
    );
    const redacted = redactPickleStrings(original, redact);
    const after = unpickle(redacted);
    assert.deepEqual(after, mapStrings(before, redact), path);
    assert.ok(!strings(after).some((s) => s.includes(home)), path);
    assert.ok(!Buffer.from(redacted).includes(home), `${path}: no byte of the path is left`);
  }
});

test('strings that grow past 255 bytes, or shrink, take the opcode that holds them; protocols 2 to 5 and FRAMEs', () => {
  for (const protocol of [2, 3, 4, 5]) {
    const original = read(`test/fixtures/pickles/snapshot-p${protocol}.pickle`);
    const before = unpickle(original);
    const grow = (s: string) => `${s}/${'x'.repeat(300)}`;
    assert.deepEqual(unpickle(redactPickleStrings(original, grow)), mapStrings(before, grow), `protocol ${protocol}, longer`);
    const shrink = () => '';
    assert.deepEqual(unpickle(redactPickleStrings(original, shrink)), mapStrings(before, shrink), `protocol ${protocol}, emptied`);
  }
});

test('a pickle that could name code, or is cut short, or lies about a length, is refused, never copied', () => {
  for (const name of ['evil-global.pickle', 'evil-reduce.pickle', 'truncated.pickle', 'length-past-end.pickle']) {
    assert.throws(() => redactPickleStrings(read(`test/fixtures/pickles/${name}`), (s) => s), PickleRedactionError, name);
  }
  // BINUNICODE8 claiming 2^63 bytes.
  const huge = new Uint8Array([0x80, 4, 0x8d, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x2e]);
  assert.throws(() => redactPickleStrings(huge, (s) => s), /ends inside a string/);
  assert.throws(() => redactPickleStrings(new Uint8Array([0x80, 4, 0x4e]), (s) => s), /no STOP/);
});

/** A pickle from its opcodes: numbers are bytes, strings their Latin-1 bytes. */
const pickle = (...parts: (number | string | Uint8Array)[]): Uint8Array =>
  new Uint8Array(parts.flatMap((p) => (typeof p === 'number' ? [p] : typeof p === 'string' ? [...Buffer.from(p, 'latin1')] : [...p])));
const u32 = (n: number) => new Uint8Array(new Uint32Array([n]).buffer);
const u64 = (n: number) => new Uint8Array(new BigUint64Array([BigInt(n)]).buffer);
const home = (s: string) => s.replaceAll('/home/alice', '~');

test('text in every opcode the reader takes as text is redacted: protocol 2 strings, protocol 0 unicode, bytes and bytearrays', () => {
  const path = '/home/alice/train.py';
  const cases: [string, Uint8Array, PickleValue][] = [
    ['SHORT_BINSTRING', pickle(0x80, 2, 0x55, path.length, path, 0x2e), '~/train.py'],
    ['BINSTRING', pickle(0x80, 2, 0x54, u32(path.length), path, 0x2e), '~/train.py'],
    ['UNICODE', pickle(0x80, 2, 0x56, path, 0x0a, 0x2e), '~/train.py'],
    ['SHORT_BINBYTES', pickle(0x80, 3, 0x43, path.length, path, 0x2e), new Uint8Array(Buffer.from('~/train.py'))],
    ['BINBYTES', pickle(0x80, 3, 0x42, u32(path.length), path, 0x2e), new Uint8Array(Buffer.from('~/train.py'))],
    ['BINBYTES8', pickle(0x80, 4, 0x8e, u64(path.length), path, 0x2e), new Uint8Array(Buffer.from('~/train.py'))],
    ['BYTEARRAY8', pickle(0x80, 5, 0x96, u64(path.length), path, 0x2e), new Uint8Array(Buffer.from('~/train.py'))],
    // Bytes 0x80–0x9f are one character each (windows-1252 would read 0x80 as €, and could not write it back).
    [
      'SHORT_BINBYTES with 0x80–0x9f',
      pickle(0x80, 3, 0x43, 4 + path.length, 0x80, 0x9f, 0x81, 0x9d, path, 0x2e),
      new Uint8Array([0x80, 0x9f, 0x81, 0x9d, ...Buffer.from('~/train.py')]),
    ],
  ];
  for (const [name, original, expected] of cases) {
    const redacted = redactPickleStrings(original, home);
    assert.deepEqual(unpickle(redacted), expected, name);
    assert.ok(!Buffer.from(redacted).includes('alice'), `${name}: no byte of the name is left`);
  }
  // A bytearray stays one (Python tells them apart); bytes nothing changed are copied as they were.
  assert.equal(redactPickleStrings(cases[6]![1], home)[2], 0x96, 'BYTEARRAY8');
  const untouched = pickle(0x80, 3, 0x43, 3, 'abc', 0x2e);
  assert.deepEqual(redactPickleStrings(untouched, home), untouched);
});

test('nothing passes unread: a text number that is not one, and STRING (which the reader does not take), are refused by both', () => {
  for (const [name, bytes] of [
    ['FLOAT with text after inf', pickle(0x80, 2, 0x46, 'inf/home/alice', 0x0a, 0x2e)],
    ['INT holding a path', pickle(0x80, 2, 0x49, '/home/alice', 0x0a, 0x2e)],
    ['PUT holding a path', pickle(0x80, 2, 0x4e, 0x70, '/home/alice', 0x0a, 0x2e)],
    ['STRING', pickle(0x80, 2, 0x53, "'/home/alice'", 0x0a, 0x2e)],
  ] as const) {
    assert.throws(() => unpickle(bytes), UnpickleError, `the reader refuses ${name}`);
    assert.throws(() => redactPickleStrings(bytes, home), PickleRedactionError, `the redaction refuses ${name}`);
  }
  // Python writes infinities and NaN as words: read as the numbers they are, and copied.
  const floats = pickle(0x80, 2, 0x28, 0x46, 'inf', 0x0a, 0x46, '-inf', 0x0a, 0x46, 'nan', 0x0a, 0x46, '1.5e3', 0x0a, 0x6c, 0x2e);
  assert.deepEqual(unpickle(floats), [Infinity, -Infinity, NaN, 1500]);
  assert.deepEqual(redactPickleStrings(floats, home), floats);
});

test("a bundle's snapshot is redacted as its report is (user and host names too), but the snapshot's own words stay", () => {
  // A user called `state` and a host called `small` (words of the snapshot itself), and a path outside any home folder.
  const redactor = makeRedactor({ userNames: ['state', 'alice'], hostNames: ['small'], homeDirs: ['/home/alice'] });
  const f = snapshotStringRedaction(redactor.text);
  assert.equal(f('/scratch/alice/run.py'), redactor.text('/scratch/alice/run.py'));
  assert.equal(f('/scratch/alice/run.py'), '/scratch/<user>/run.py');
  for (const word of ['state', 'small', 'segment_type', 'alloc', 'active_allocated']) assert.equal(f(word), word);
  for (const path of ['test/fixtures/diagnoses/pytorch-oom-too-large.pickle', 'test/fixtures/snapshots/h100/oom.pickle']) {
    const before = unpickle(read(path));
    const after = unpickle(redactPickleStrings(read(path), f));
    assert.deepEqual(after, mapStrings(before, f), path);
    const [was, is] = [buildSnapshotModel(before), buildSnapshotModel(after)];
    assert.deepEqual(
      is.devices.map((d) => [d.count, [...d.action], [...d.size]]),
      was.devices.map((d) => [d.count, [...d.action], [...d.size]]),
      `${path}: every trace entry read the same`,
    );
    assert.deepEqual(
      is.segments.map((g) => [g.segmentType, g.blocks.map((b) => b.state)]),
      was.segments.map((g) => [g.segmentType, g.blocks.map((b) => b.state)]),
      `${path}: every segment's type and block's state`,
    );
  }
});
