import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { PickleRedactionError, redactPickleStrings } from '../../core/memory/redact-pickle';
import { PickleTuple, unpickle, type PickleValue } from '../../core/memory/unpickle';
import { ROOT } from '../helpers/cli';

const read = (path: string) => new Uint8Array(readFileSync(join(ROOT, path)));

/** The value with every string passed through `f`: what the redacted pickle must read as. */
function mapStrings(v: PickleValue, f: (s: string) => string): PickleValue {
  if (typeof v === 'string') return f(v);
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
