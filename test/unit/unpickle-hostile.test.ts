import assert from 'node:assert/strict';
import { test } from 'node:test';

import { PickleTuple, unpickle, UnpickleError, type UnpickleLimits } from '../../core/memory/unpickle';
import {
  appendNest,
  laughs,
  long1,
  long4,
  noneFlood,
  pickle,
  sharedString,
  times,
  tuple1Nest,
  tuple2Nest,
  tuple3Nest,
  u32,
  u64,
} from '../helpers/hostile-pickles';

// The hostile pickles of issue 25's attack review, made here at the review's sizes: each is refused, in words that
// say what was found and the limit, before the work it asks for is done.

const PROTO_4 = [0x80, 0x04];

function refusal(bytes: Uint8Array, limits: Partial<UnpickleLimits> = {}): string {
  try {
    unpickle(bytes, limits);
  } catch (error) {
    assert.ok(error instanceof UnpickleError, String(error));
    assert.match(error.message, /\(at byte \d+\)\. It was refused and nothing was run\.$/);
    return error.message;
  }
  return assert.fail('the pickle was read, not refused');
}

test('NONE two million times is refused at the stack cap, not held as one array of every value', () => {
  assert.match(refusal(noneFlood()), /^The pickle piles up more than 1,000,000 values at once \(a snapshot's pickler writes 1,000 at a time\)/);
});

test('one 1 MiB string referred to 5,000 times (a 1 MB pickle) is refused by what the references would expand to', () => {
  const bytes = sharedString();
  assert.ok(bytes.byteLength < 1.1e6);
  assert.match(
    refusal(bytes),
    /^The pickle's references to values it already holds would expand it past 1\.01 GiB \(the limit: 1024 times its 1\.01 MiB, at least 64 MiB\); the last, memo entry 0, stands for 1 MiB/,
  );
  // DUP is a reference too.
  assert.match(
    refusal(pickle(PROTO_4, 0x58, u32(2 ** 20), times(2 ** 20, 0x61), times(5000, 0x32), 0x2e)),
    /would expand it past .*; the last, DUP, stands for 1 MiB/,
  );
});

test('billion laughs (372 bytes, each level a list of the one before twice) is refused at 64 MiB expanded', () => {
  const bytes = laughs();
  assert.ok(bytes.byteLength < 400, `${bytes.byteLength} bytes`);
  assert.match(refusal(bytes), /would expand it past 64 MiB \(the limit: 1024 times its 372 B, at least 64 MiB\); the last, memo entry \d+, stands for/);
  // A few levels are data like any other.
  assert.equal(((unpickle(laughs(10)) as unknown[])[0] as unknown[]).length, 2);
});

test('a container referred to again is never added to afterwards: no cycles, no size that is out of date', () => {
  // l = []; l.append(l)
  assert.match(refusal(pickle(PROTO_4, 0x5d, 0x94, 0x68, 0, 0x61, 0x2e)), /adds to a list it has already referred to again: a snapshot never does/);
  // A list referred to while empty, then filled: its references were charged for an empty list.
  const growAfter = pickle(PROTO_4, 0x5d, 0x94, 0x5d, 0x28, times(3, 0x68, 0), 0x65, 0x30, 0x4e, 0x61, 0x2e);
  assert.match(refusal(growAfter), /adds to a list it has already referred to again/);
  // Referring to a finished value that is still on the stack is what torch writes for a recursive frame: read.
  const twice = unpickle(pickle(PROTO_4, 0x5d, 0x28, 0x5d, 0x94, 0x4e, 0x61, 0x68, 0, 0x65, 0x2e)) as unknown[][];
  assert.equal(twice[0], twice[1]);
});

test('LONG4 of 1 MiB and LONG1 of 255 bytes are refused by their length, before they are decoded', () => {
  assert.match(refusal(long4()), /^LONG4 holds an integer of 1,048,576 bytes; a snapshot's integers fit in 16/);
  assert.match(refusal(long4(256 * 1024)), /LONG4 holds an integer of 262,144 bytes/);
  assert.match(refusal(long1()), /^LONG1 holds an integer of 255 bytes/);
  assert.equal(typeof unpickle(long1(16)), 'bigint');
  // The text forms, refused by their line's length before BigInt sees it.
  for (const [op, name] of [
    [0x49, 'INT'],
    [0x4c, 'LONG'],
    [0x70, 'PUT'],
    [0x67, 'GET'],
  ] as const) {
    assert.match(refusal(pickle(PROTO_4, 0x4e, op, times(2 ** 20, 0x39), 0x0a, 0x2e)), new RegExp(`^${name} runs past 64 characters`));
  }
});

test('nesting through TUPLE1, TUPLE2, TUPLE3 and APPEND (no MARK) counts every level against 256', () => {
  for (const bytes of [tuple1Nest(), tuple2Nest(), tuple3Nest(), appendNest()]) {
    assert.match(refusal(bytes), /^The pickle nests deeper than 256 levels \(a snapshot nests 7\)/);
  }
  // A deep value keeps its depth when it is referred to through the memo.
  assert.match(refusal(pickle(PROTO_4, 0x4e, times(200, 0x85), 0x94, 0x30, 0x68, 0, times(60, 0x85), 0x2e)), /nests deeper than 256 levels/);
  assert.ok(unpickle(tuple1Nest(256)) instanceof PickleTuple);
});

test('every length-prefixed opcode checks what it announces against the bytes left before it allocates', () => {
  const cases: [string, number[]][] = [
    ['BINUNICODE8', [0x8d, ...u64(2n ** 40n)]],
    ['BINBYTES8', [0x8e, ...u64(2n ** 40n)]],
    ['BYTEARRAY8', [0x96, ...u64(2n ** 40n)]],
    ['BINUNICODE', [0x58, ...u32(2 ** 32 - 1)]],
    ['BINBYTES', [0x42, ...u32(2 ** 32 - 1)]],
    ['BINSTRING', [0x54, ...u32(2 ** 31 - 1)]],
    ['SHORT_BINUNICODE', [0x8c, 255]],
    ['SHORT_BINBYTES', [0x43, 255]],
    ['LONG4', [0x8b, ...u32(16)]],
  ];
  for (const [name, ops] of cases)
    assert.match(refusal(pickle(PROTO_4, ops, 0x2e)), /^The pickle ends early: [\d,]+ bytes were announced where 1 remain/, name);
  assert.match(refusal(pickle(PROTO_4, 0x8d, u64(2n ** 60n), 0x2e)), /A length of 1152921504606846976 bytes was announced, past 2\^53/);
});

test('what lives at once is capped: one list, dict or set, and the memo', () => {
  const few = { maxLength: 1000, maxMemo: 1000 };
  const distinct = (n: number, ...after: number[]) => Array.from({ length: n }, (_, i) => [0x4d, i & 0xff, i >> 8, ...after]).flat();
  assert.match(refusal(pickle(PROTO_4, 0x5d, times(1001, 0x4e, 0x61), 0x2e), few), /^A list of the pickle holds more than 1,000 elements/);
  assert.match(refusal(pickle(PROTO_4, 0x7d, 0x28, distinct(1001, 0x4e), 0x75, 0x2e), few), /^A dict of the pickle holds more than 1,000 elements/);
  assert.match(refusal(pickle(PROTO_4, 0x8f, 0x28, distinct(1001), 0x90, 0x2e), few), /^A set of the pickle holds more than 1,000 elements/);
  assert.match(refusal(pickle(PROTO_4, 0x5d, times(1001, 0x4e, 0x94, 0x61), 0x2e), few), /^The pickle stores memo entry 1000, past the limit of 1,000 entries/);
  assert.match(
    refusal(pickle(PROTO_4, 0x4e, 0x72, u32(4e9), 0x2e)),
    /stores memo entry 4000000000, past the limit of 65,536 entries \(one per 16 bytes of its file, at most 16,000,000\)/,
  );
  assert.match(refusal(pickle(PROTO_4, 0x4e, 0x94, 0x94, 0x2e)), /stores one value in the memo twice \(entries 0 and 1\)/);
  assert.match(refusal(pickle(PROTO_4, 0x4e, 0x71, 3, 0x30, 0x4e, 0x71, 3, 0x2e)), /stores memo entry 3 twice/);
});
