import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { Base64Error, decodeBase64, encodeBase64, typedToBase64 } from '../../core/memory/base64';
import { buildSnapshotModel } from '../../core/memory/snapshot-model';
import { timelineFromSnapshot } from '../../core/memory/snapshot-timeline';
import { checkTimelineWire, decodeTimeline, encodeTimeline, TimelineWireError, WIRE_LIMITS, type TimelineWire } from '../../core/memory/timeline-wire';
import { unpickle } from '../../core/memory/unpickle';
import { ROOT } from '../helpers/cli';

const H100 = join(ROOT, 'test/fixtures/snapshots/h100');
const snapshot = (name: string) => timelineFromSnapshot(buildSnapshotModel(unpickle(new Uint8Array(readFileSync(join(H100, name))))), 0, { name });

test('base64: the same text as Node’s encoder for every length and byte, and back', () => {
  let seed = 3;
  const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
  for (let n = 0; n < 300; n++) {
    const bytes = Uint8Array.from({ length: n }, rand);
    const text = encodeBase64(bytes);
    assert.equal(text, Buffer.from(bytes).toString('base64'), `length ${n}`);
    assert.deepEqual(decodeBase64(text, n), bytes);
  }
  const big = new Float64Array(100_000).map((_, i) => i * 1.5);
  assert.equal(typedToBase64(big), Buffer.from(big.buffer).toString('base64'), 'past the slice size of the string builder');
});

test('base64: wrong lengths, foreign characters and misplaced padding are refused', () => {
  assert.throws(() => decodeBase64('AAAA', 4), /holds 4 base64 characters where 8 were expected \(4 bytes\)/);
  assert.throws(() => decodeBase64('AA*A', 3), Base64Error);
  assert.throws(() => decodeBase64('AAé=', 2), /not base64/);
  assert.throws(() => decodeBase64('AA==', 2), /padding/);
  assert.throws(() => decodeBase64('AAA=', 3), /padding/);
  assert.throws(() => decodeBase64('A=AA', 3), /not base64/);
  assert.deepEqual([...decodeBase64('AAE=', 2)], [0, 1]);
});

test('a snapshot’s timeline round-trips through JSON: columns, markers, counters, and stacks that still share their frames', () => {
  const t = snapshot('leak.pickle');
  const wire = encodeTimeline(t);
  const text = JSON.stringify(wire);
  assert.ok(wire.frames.length < t.stacks.reduce((s, st) => s + st.frames.length, 0), 'frames written once');
  const back = decodeTimeline(JSON.parse(text));
  assert.deepEqual(back, t);
  const objects = new Set(back.stacks.flatMap((s) => s.frames));
  assert.equal(objects.size, wire.frames.length, 'one object per frame on the other side too');
  assert.equal(back.allocations.end.filter((e) => e === Infinity).length, 54, '+Infinity (alive at the end) survives');
});

test('the host’s native base64 encoder writes the same wire as core’s own', () => {
  const t = snapshot('oom.pickle');
  const native = encodeTimeline(t, { base64: (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') });
  assert.deepEqual(native, encodeTimeline(t));
});

const good = (): TimelineWire => JSON.parse(JSON.stringify(encodeTimeline(snapshot('oom.pickle')))) as TimelineWire;

/** One hostile change to a good wire, and the words its refusal must contain. */
const hostile: [string, (w: TimelineWire) => unknown, RegExp][] = [
  ['not an object', () => 'timeline', /expected object/],
  ['null', () => null, /expected object/],
  ['another version', (w) => ({ ...w, version: 2 }), /version/],
  ['an unknown key', (w) => ({ ...w, script: 'x' }), /script/],
  [
    'a count the columns do not have',
    (w) => ({ ...w, allocations: { ...w.allocations, count: w.allocations.count + 1 } }),
    /allocations\.start holds \d+ base64 characters where \d+ were expected/,
  ],
  ['a count past the cap', (w) => ({ ...w, allocations: { ...w.allocations, count: WIRE_LIMITS.allocations + 1 } }), /allocations\.count/],
  ['a negative count', (w) => ({ ...w, spans: { ...w.spans, count: -1 } }), /spans\.count/],
  [
    'a column that is not base64',
    (w) => ({ ...w, allocations: { ...w.allocations, size: w.allocations.size.replace(/^./, '!') } }),
    /allocations\.size has a character that is not base64/,
  ],
  ['a column that is a number', (w) => ({ ...w, allocations: { ...w.allocations, start: 12 } }), /allocations\.start/],
  ['a stack index past the stacks', (w) => withColumn(w, 'stack', Int32Array, 0, 7), /allocations\.stack\[0\] is 7, outside -1\.\.0/],
  ['a label index past the labels', (w) => withColumn(w, 'label', Int32Array, 2, 99), /allocations\.label\[2\] is 99/],
  ['an end before its start', (w) => withColumn(w, 'end', Float64Array, 0, -5), /allocations\.end\[0\] is not a time at or after its start/],
  ['a NaN start', (w) => withColumn(w, 'start', Float64Array, 1, NaN), /allocations\.start\[1\] is not a finite number/],
  ['an infinite start', (w) => withColumn(w, 'start', Float64Array, 1, Infinity), /allocations\.start\[1\] is not a finite number/],
  ['a negative size', (w) => withColumn(w, 'size', Float64Array, 3, -1), /allocations\.size\[3\] is not a size/],
  ['an infinite address', (w) => withColumn(w, 'address', Float64Array, 3, Infinity), /allocations\.address\[3\] is not an address/],
  ['a NaN duration', (w) => ({ ...w, durationUs: null }), /durationUs/],
  ['an infinite origin', (w) => ({ ...w, originUs: Infinity }), /originUs/],
  ['a counter going back in time', (w) => withCounter(w, (t) => t.reverse()), /counters\[0\] goes back in time/],
  ['a counter with a NaN value', (w) => withCounter(w, undefined, (v) => v.fill(NaN)), /counters\[0\] point 0 is not a finite number/],
  [
    'a marker naming an allocation that is not there',
    (w) => ({ ...w, markers: [{ ...w.markers[0]!, allocation: 8 }] }),
    /markers\[0\] names allocation 8, and there are 8/,
  ],
  ['a marker of an unknown kind', (w) => ({ ...w, markers: [{ ...w.markers[0]!, kind: 'boom' }] }), /markers\.0\.kind/],
  ['too many markers', (w) => ({ ...w, markers: Array.from({ length: WIRE_LIMITS.markers + 1 }, () => w.markers[0]!) }), /markers/],
  ['too many counters', (w) => ({ ...w, counters: Array.from({ length: WIRE_LIMITS.counters + 1 }, () => w.counters[0]!) }), /counters/],
  ['a marker detail of a megabyte', (w) => ({ ...w, markers: [{ ...w.markers[0]!, detail: 'x'.repeat(1 << 20) }] }), /detail/],
  ['a title of 10,000 characters', (w) => ({ ...w, title: 'x'.repeat(10_000) }), /title/],
  ['labels of 40 MB in all', (w) => ({ ...w, labels: Array.from({ length: 40_000 }, () => 'x'.repeat(1000)) }), /labels hold 40000000 characters, over/],
  ['a stack naming a frame that is not there', (w) => ({ ...w, stacks: [{ frames: [0, 999], userFrame: 0 }] }), /stacks\[0\] names frame 999/],
  ['a user frame past its stack', (w) => ({ ...w, stacks: [{ ...w.stacks[0]!, userFrame: 500 }] }), /stacks\[0\]\.userFrame is 500/],
  ['a span on a lane that does not exist', (w) => withSpan(w, 9), /spans\.lane\[0\] is 9/],
  ['a device of a billion', (w) => ({ ...w, device: 1e9 }), /device/],
];

function withColumn(
  w: TimelineWire,
  name: 'stack' | 'label' | 'end' | 'start' | 'size' | 'address',
  kind: typeof Int32Array | typeof Float64Array,
  index: number,
  value: number,
) {
  const bytes = Buffer.from(w.allocations[name], 'base64');
  const column = new kind(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  column[index] = value;
  return { ...w, allocations: { ...w.allocations, [name]: Buffer.from(column.buffer).toString('base64') } };
}

function withCounter(w: TimelineWire, time?: (t: Float64Array) => void, value?: (v: Float64Array) => void) {
  const c = w.counters[0]!;
  const decode = (s: string) => {
    const b = Buffer.from(s, 'base64');
    return new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  };
  const t = decode(c.time);
  const v = decode(c.value);
  time?.(t);
  value?.(v);
  return { ...w, counters: [{ ...c, time: Buffer.from(t.buffer).toString('base64'), value: Buffer.from(v.buffer).toString('base64') }] };
}

function withSpan(w: TimelineWire, lane: number) {
  const one = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
  return {
    ...w,
    spans: {
      count: 1,
      start: one(new Uint8Array(new Float64Array([0]).buffer)),
      end: one(new Uint8Array(new Float64Array([1]).buffer)),
      lane: one(new Uint8Array([lane])),
      label: one(new Uint8Array(new Int32Array([-1]).buffer)),
      step: one(new Uint8Array(new Int32Array([-1]).buffer)),
    },
  };
}

test('hostile wires are refused with what is wrong and where, never decoded into something that draws wrong', () => {
  assert.doesNotThrow(() => decodeTimeline(good()), 'the unchanged wire decodes');
  for (const [what, change, message] of hostile) {
    assert.throws(
      () => decodeTimeline(change(good())),
      (e: unknown) => e instanceof TimelineWireError && /^This is not a timeline the workbench can draw: /.test(e.message) && message.test(e.message),
      what,
    );
  }
});

/** What the host's check refuses without decoding a column: everything about the envelope and the columns' lengths. */
const REFUSED_WITHOUT_DECODING = new Set([
  'not an object',
  'another version',
  'an unknown key',
  'a count the columns do not have',
  'a count past the cap',
  'a column that is a number',
  'a NaN duration',
  'a marker naming an allocation that is not there',
  'too many markers',
  'labels of 40 MB in all',
  'a stack naming a frame that is not there',
  'a user frame past its stack',
  'a device of a billion',
]);

test('the host’s check refuses what is wrong with the envelope and the column lengths, in the decoder’s words, and decodes nothing', () => {
  const wire = good();
  const checked = checkTimelineWire(wire);
  assert.equal(checked.allocations.start, wire.allocations.start, 'the columns pass through as the same text');
  for (const [what, change, message] of hostile) {
    const bad = change(good());
    let refusal: unknown = null;
    try {
      checkTimelineWire(bad);
    } catch (error) {
      refusal = error;
    }
    if (REFUSED_WITHOUT_DECODING.has(what)) assert.ok(refusal, `${what}: refused by the check`);
    if (refusal) {
      assert.ok(refusal instanceof TimelineWireError && message.test(refusal.message), `${what}: ${String(refusal)}`);
    } else {
      // What only the values show is the decoder's: the renderer decodes, and refuses it there.
      assert.throws(() => decodeTimeline(bad), TimelineWireError, what);
    }
  }
  const notBase64 = { ...wire, allocations: { ...wire.allocations, size: wire.allocations.size.replace(/^./, '!') } };
  assert.doesNotThrow(() => checkTimelineWire(notBase64), 'the check reads no column’s characters');
});

test('a wire with a million problems says the first few, not all of them', () => {
  const w = { ...good(), steps: Array.from({ length: 50_000 }, () => ({ index: -1, label: 7 })) };
  assert.throws(
    () => decodeTimeline(w),
    (e: unknown) => e instanceof TimelineWireError && /and \d+ more problems/.test(e.message) && e.message.length < 2000,
  );
});
