import assert from 'node:assert/strict';
import { test } from 'node:test';

import { decodeMessageFrame, encodeMessage, joinTyped, stringifyTyped, TypedWireError } from '../../core/api/typed-wire';

const message = () => ({
  id: 7,
  envelope: {
    ok: true,
    value: {
      title: 'a “timeline” ✓',
      columns: { start: new Float64Array([0, 1.5, Infinity, NaN, -0]), stack: new Int32Array([-1, 0, 2 ** 31 - 1]), lane: new Uint8Array([0, 1, 255]) },
      list: [new Float64Array(0), { inner: new Int32Array(new Int32Array([9, 8, 7, 6]).buffer, 4, 2) }],
      text: 'looks like a reference: {"typed":[],"message":null}',
      nothing: null,
    },
  },
});

test('a message with typed arrays is one binary frame; it reads back equal, each array of its own type', () => {
  const frame = encodeMessage(message());
  assert.ok(frame instanceof Uint8Array);
  const back = decodeMessageFrame(frame) as ReturnType<typeof message>;
  assert.deepEqual(back, message());
  const { columns, list } = back.envelope.value;
  assert.ok(columns.start instanceof Float64Array && columns.stack instanceof Int32Array && columns.lane instanceof Uint8Array);
  assert.ok(Object.is(columns.start[4], -0) && Number.isNaN(columns.start[3]), 'NaN and -0 are bytes, not JSON');
  assert.deepEqual([...(list[1] as { inner: Int32Array }).inner], [8, 7], 'a view crosses as its own elements, not its whole buffer');
});

test('a frame read from an aligned buffer is viewed in place; a misaligned one is copied once, with the same values', () => {
  const frame = encodeMessage(message()) as Uint8Array;
  const aligned = decodeMessageFrame(frame) as ReturnType<typeof message>;
  assert.equal(aligned.envelope.value.columns.start.buffer, frame.buffer, 'no copy of the columns');
  const shifted = new Uint8Array(frame.byteLength + 3);
  shifted.set(frame, 3);
  const copied = decodeMessageFrame(shifted.subarray(3)) as ReturnType<typeof message>;
  assert.deepEqual(copied, message());
  const { start, stack, lane } = copied.envelope.value.columns;
  assert.notEqual(start.buffer, shifted.buffer, 'the body was copied once, away from the frame');
  assert.ok(start.buffer === stack.buffer && stack.buffer === lane.buffer, 'and every array views that one copy');
  const pooled = Buffer.concat([Buffer.alloc(3), Buffer.from(frame)]).subarray(3);
  assert.deepEqual(decodeMessageFrame(pooled), message(), 'a Node Buffer at an odd offset (how ws hands frames over) too');
});

test('a message with no typed array stays the JSON text it always was', () => {
  const plain = { id: 1, envelope: { ok: true, value: { a: [1, 'two', null] } } };
  assert.equal(encodeMessage(plain), JSON.stringify(plain));
});

test('an array of another type is refused in words, never sent as an object of indices', () => {
  assert.throws(
    () => stringifyTyped({ v: new Float32Array(2) }),
    (e: unknown) => e instanceof TypedWireError && /a Float32Array cannot cross the wire/.test(e.message),
  );
});

/** A frame made by hand: its header's JSON as given, then the body at the next multiple of 8. */
function frameOf(header: string, body: Uint8Array = new Uint8Array(16)): Uint8Array {
  const h = new TextEncoder().encode(header);
  const start = Math.ceil((4 + h.byteLength) / 8) * 8;
  const out = new Uint8Array(start + body.byteLength);
  new DataView(out.buffer).setUint32(0, h.byteLength, true);
  out.set(h, 4);
  out.set(body, start);
  return out;
}
const ref = (path: string[], offset = 0, length = 1, type = 'f64') => ({ path, type, offset, length });
const framed = (refs: unknown, msg: unknown = { id: 3, a: null, b: null }) => frameOf(JSON.stringify({ typed: refs, message: msg }));

test('hostile frames are refused with what is wrong, and the answer they claim to be is named', () => {
  const cases: [string, Uint8Array, RegExp][] = [
    ['shorter than its header', new Uint8Array(3), /shorter than its header/],
    [
      'a header past the frame',
      (() => {
        const f = frameOf('{}');
        new DataView(f.buffer).setUint32(0, 1e6, true);
        return f;
      })(),
      /claims 1000000 bytes/,
    ],
    ['a header that is not JSON', frameOf('{"typed":'), /header is not JSON/],
    ['a header with no message', frameOf('{"typed":[]}'), /holds no message/],
    ['references that are no list', framed({}), /not a list/],
    ['a slot the message does not hold', framed([ref(['c'])]), /names c, which the message does not hold/],
    ['a slot through a missing object', framed([ref(['c', 'd'])]), /names c\.d, which the message does not hold/],
    ['a slot that is not empty', framed([ref(['id'])]), /names id, which is not an empty slot/],
    ['bytes past the body', framed([ref(['a'], 8, 2)]), /lies past the body's 16 bytes/],
    ['two arrays over the same bytes', framed([ref(['a'], 0, 2), ref(['b'], 8, 1)]), /typed array 1 \(b\) lies .* or over another array/],
    ['an offset not aligned', framed([ref(['a'], 4, 1, 'i32')]), /aligned offset/],
    ['a type it does not know', framed([ref(['a'], 0, 1, 'f32')]), /typed array 0 is not described/],
    ['a negative length', framed([ref(['a'], 0, -1)]), /typed array 0 is not described/],
    ['a prototype in the path', framed([ref(['__proto__'])], JSON.parse('{"id":3,"__proto__":null}')), /typed array 0 is not described/],
    ['a path too deep', framed([ref(Array.from({ length: 65 }, () => 'a'))]), /typed array 0 is not described/],
  ];
  for (const [what, frame, words] of cases) {
    assert.throws(
      () => decodeMessageFrame(frame),
      (e: unknown) => e instanceof TypedWireError && words.test(e.message),
      what,
    );
  }
  assert.throws(
    () => decodeMessageFrame(framed([ref(['c'])])),
    (e: unknown) => e instanceof TypedWireError && e.messageId === 3,
    'the id is kept, so the call it answers can be told',
  );
});

test('JSON that looks like a reference is data: only the header’s list places arrays', () => {
  const value = { a: { typed: [{ path: ['b'], type: 'u8', offset: 0, length: 1 }], message: { b: null } }, b: null };
  assert.deepEqual(joinTyped(structuredClone(value), [], new Uint8Array(8)), value);
});
