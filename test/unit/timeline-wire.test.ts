import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { decodeMessageFrame, encodeMessage, stringifyTyped } from '../../core/api/typed-wire';
import { buildSnapshotModel } from '../../core/memory/snapshot-model';
import { timelineFromSnapshot } from '../../core/memory/snapshot-timeline';
import { checkTimelineWire, decodeTimeline, encodeTimeline, TimelineWireError, WIRE_LIMITS, type TimelineWire } from '../../core/memory/timeline-wire';
import { unpickle } from '../../core/memory/unpickle';
import { ROOT } from '../helpers/cli';

const H100 = join(ROOT, 'test/fixtures/snapshots/h100');
const snapshot = (name: string) => timelineFromSnapshot(buildSnapshotModel(unpickle(new Uint8Array(readFileSync(join(H100, name))))), 0, { name });

/** A message as it reaches the browser from serve: one binary frame, its columns viewing the frame's bytes. */
const viaServe = <T>(value: T): T => {
  const frame = encodeMessage({ id: 1, envelope: { ok: true, value } });
  assert.ok(frame instanceof Uint8Array, 'a message with columns goes as a binary frame');
  return (decodeMessageFrame(frame) as { envelope: { value: T } }).envelope.value;
};

test('a snapshot’s timeline round-trips through serve’s binary frame and structured clone: columns, markers, counters, shared frames', () => {
  const t = snapshot('leak.pickle');
  const wire = encodeTimeline(t);
  assert.ok(wire.frames.length < t.stacks.reduce((s, st) => s + st.frames.length, 0), 'frames written once');
  for (const [how, back] of [
    ['serve', decodeTimeline(viaServe(wire))],
    ['Electron IPC', decodeTimeline(structuredClone(wire))],
  ] as const) {
    assert.deepEqual(back, t, how);
    assert.ok(back.allocations.start instanceof Float64Array && back.allocations.stack instanceof Int32Array && back.spans.lane instanceof Uint8Array, how);
    const objects = new Set(back.stacks.flatMap((s) => s.frames));
    assert.equal(objects.size, wire.frames.length, `${how}: one object per frame on the other side too`);
    assert.equal(back.allocations.end.filter((e) => e === Infinity).length, 54, `${how}: +Infinity (alive at the end) survives`);
  }
});

test('the columns cross as their bytes: the frame is their bytes, the rest of the wire as JSON, and a header, nothing more', () => {
  const wire = encodeTimeline(snapshot('leak.pickle'));
  const message = { id: 1, envelope: { ok: true, value: wire } };
  const frame = encodeMessage(message) as Uint8Array;
  const a = wire.allocations;
  const s = wire.spans;
  const columns = [
    a.start,
    a.end,
    a.address,
    a.size,
    a.stack,
    a.step,
    a.label,
    s.start,
    s.end,
    s.lane,
    s.label,
    s.step,
    ...wire.counters.flatMap((c) => [c.time, c.value]),
  ];
  const bytes = columns.reduce((n, c) => n + c.byteLength, 0);
  const { text, refs } = stringifyTyped(message);
  assert.equal(refs.length, columns.length, 'one reference per column');
  const header = Buffer.byteLength(`{"typed":${JSON.stringify(refs)},"message":${text}}`);
  assert.ok(frame.byteLength >= 4 + header + bytes, 'every column’s bytes are in the frame');
  assert.ok(frame.byteLength <= 4 + header + bytes + 8 * (columns.length + 1), `${frame.byteLength} bytes: no more than alignment beside them`);
  assert.doesNotMatch(text, /[A-Za-z0-9+/]{200}/, 'no column is in the JSON as text');
});

const good = (): TimelineWire => viaServe(encodeTimeline(snapshot('oom.pickle')));

/** One hostile change to a good wire, and the words its refusal must contain. */
const hostile: [string, (w: TimelineWire) => unknown, RegExp][] = [
  ['not an object', () => 'timeline', /expected object/],
  ['null', () => null, /expected object/],
  ['another version', (w) => ({ ...w, version: 2 }), /version/],
  ['an unknown key', (w) => ({ ...w, script: 'x' }), /script/],
  [
    'a count the columns do not have',
    (w) => ({ ...w, allocations: { ...w.allocations, count: w.allocations.count + 1 } }),
    /allocations\.start holds \d+ values where \d+ were expected/,
  ],
  ['a count past the cap', (w) => ({ ...w, allocations: { ...w.allocations, count: WIRE_LIMITS.allocations + 1 } }), /allocations\.count/],
  ['a negative count', (w) => ({ ...w, spans: { ...w.spans, count: -1 } }), /spans\.count/],
  [
    'a column of another type',
    (w) => ({ ...w, allocations: { ...w.allocations, size: new Int32Array(w.allocations.count) } }),
    /allocations\.size: Invalid input: expected Float64Array, received Int32Array/,
  ],
  ['a column as a list of numbers', (w) => ({ ...w, allocations: { ...w.allocations, step: [...w.allocations.step] } }), /allocations\.step/],
  ['a column as base64 text', (w) => ({ ...w, spans: { ...w.spans, lane: '' } }), /spans\.lane/],
  ['a counter column one short', (w) => withCounter(w, undefined, undefined, 1), /counters\[0\]\.value holds \d+ values where \d+ were expected/],
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
  const column = new kind(w.allocations[name]);
  column[index] = value;
  return { ...w, allocations: { ...w.allocations, [name]: column } };
}

function withCounter(w: TimelineWire, time?: (t: Float64Array) => void, value?: (v: Float64Array) => void, shorter = 0) {
  const c = w.counters[0]!;
  const t = new Float64Array(c.time);
  const v = new Float64Array(c.value).slice(0, c.count - shorter);
  time?.(t);
  value?.(v);
  return { ...w, counters: [{ ...c, time: t, value: v }] };
}

function withSpan(w: TimelineWire, lane: number) {
  return {
    ...w,
    spans: {
      count: 1,
      start: new Float64Array([0]),
      end: new Float64Array([1]),
      lane: new Uint8Array([lane]),
      label: new Int32Array([-1]),
      step: new Int32Array([-1]),
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

/** What the host's check refuses without reading a column's values: everything about the envelope and the columns' types and lengths. */
const REFUSED_WITHOUT_DECODING = new Set([
  'not an object',
  'another version',
  'an unknown key',
  'a count the columns do not have',
  'a count past the cap',
  'a column that is a number',
  'a column of another type',
  'a column as a list of numbers',
  'a column as base64 text',
  'a counter column one short',
  'a NaN duration',
  'a marker naming an allocation that is not there',
  'too many markers',
  'labels of 40 MB in all',
  'a stack naming a frame that is not there',
  'a user frame past its stack',
  'a device of a billion',
]);

test('the host’s check refuses what is wrong with the envelope and the columns’ types and lengths, in the decoder’s words, and reads no value', () => {
  const wire = good();
  const checked = checkTimelineWire(wire);
  assert.equal(checked.allocations.start, wire.allocations.start, 'the columns pass through as the same arrays, not copied');
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
  assert.doesNotThrow(() => checkTimelineWire(withColumn(wire, 'size', Float64Array, 0, NaN)), 'the check reads no column’s values');
});

test('a wire with a million problems says the first few, not all of them', () => {
  const w = { ...good(), steps: Array.from({ length: 50_000 }, () => ({ index: -1, label: 7 })) };
  assert.throws(
    () => decodeTimeline(w),
    (e: unknown) => e instanceof TimelineWireError && /and \d+ more problems/.test(e.message) && e.message.length < 2000,
  );
});
