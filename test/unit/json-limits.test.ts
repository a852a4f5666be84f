import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { checkJsonLimits, JsonRefusedError, measureJson, NO_JSON_LIMITS, parseJsonWithin, type JsonLimits } from '../../core/json-limits';
import { ROOT } from '../helpers/cli';

const bytes = (text: string) => new TextEncoder().encode(text);
const shape = (text: string | Uint8Array) => measureJson(typeof text === 'string' ? bytes(text) : text).shape;
const limits = (over: Partial<JsonLimits>): JsonLimits => ({ ...NO_JSON_LIMITS, ...over });

/** What JSON.parse built, counted the way measureJson counts the text. */
function parsedShape(value: unknown): { depth: number; items: number } {
  if (value === null || typeof value !== 'object') return { depth: 0, items: 1 };
  const children = Array.isArray(value) ? (value as unknown[]) : Object.values(value as object);
  let depth = 0;
  let items = 1;
  for (const child of children) {
    const s = parsedShape(child);
    depth = Math.max(depth, s.depth);
    items += s.items;
  }
  return { depth: depth + 1, items };
}

/** A small seeded generator (mulberry32), so a failure is the same failure next time. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRING_PIECES = ['a', 'é', '€', '😀', '\\"', '\\\\', '\\n', '\\u00e9', '\\/', ' ', '{', ']', ',', ':', '\\u0022'];

function randomJson(next: () => number, depth: number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!;
  const space = () => pick(['', '', ' ', '\n', '\t', '\r\n  ']);
  const string = (first = '') => `"${first}${Array.from({ length: Math.floor(next() * 6) }, () => pick(STRING_PIECES)).join('')}"`;
  const kind = depth > 5 ? Math.floor(next() * 4) : Math.floor(next() * 6);
  if (kind === 0) return pick(['0', '-1', '3.25', '-1.5e+10', '2E-3', '123456789012345678901234567890']);
  if (kind === 1) return pick(['true', 'false', 'null']);
  if (kind <= 3) return string();
  const n = Math.floor(next() * 5);
  // Keys differ in their first character: JSON.parse keeps one of a repeated key, and the text has both.
  const parts = Array.from({ length: n }, (_, i) =>
    kind === 4
      ? space() + randomJson(next, depth + 1) + space()
      : `${space()}${string(String(i))}${space()}:${space()}${randomJson(next, depth + 1)}${space()}`,
  );
  return kind === 4 ? `[${parts.join(',')}${n ? '' : space()}]` : `{${parts.join(',')}${n ? '' : space()}}`;
}

test('the shape of a text: values, depth, bytes, the longest string (keys are not values, escapes are their bytes)', () => {
  assert.deepEqual(shape('1'), { bytes: 1, depth: 0, items: 1, longestString: 0 });
  assert.deepEqual(shape('[]'), { bytes: 2, depth: 1, items: 1, longestString: 0 });
  assert.deepEqual(shape('[1, [2, [true, null]], "x"]'), { bytes: 27, depth: 3, items: 8, longestString: 1 });
  assert.deepEqual(shape('{"key": "v", "k2": {"longer key": [false]}}'), { bytes: 43, depth: 3, items: 5, longestString: 10 });
  assert.deepEqual(shape('{"a":{},"b":[],"c":""}'), { bytes: 22, depth: 2, items: 4, longestString: 1 });
  assert.equal(shape('"a\\"b\\\\"').longestString, 6, 'an escaped quote does not end the string; an escaped backslash does not escape the quote');
  assert.equal(shape('"\\u00e9"').longestString, 6);
  assert.equal(shape('"é"').longestString, 2, 'bytes, not characters');
  assert.equal(shape('  \n\t\r[ 1 , 2 ]  ').items, 3);
  assert.equal(shape('').items, 0);
});

test('each limit stops the count at the first place it is passed, and says which limit, its figure and where', () => {
  assert.equal(checkJsonLimits(bytes('[1,2,3]'), limits({ items: 4, depth: 1, bytes: 7, stringBytes: 0 })), null, 'at the limit is within it');
  assert.match(checkJsonLimits(bytes('[1,2,3]'), limits({ bytes: 6, role: 'a manifest' }))!, /^is 7 B \(7 bytes\), over the limit of 6 B for a manifest$/);
  assert.match(checkJsonLimits(bytes('[1,2,3]'), limits({ items: 3 }))!, /^holds more than 3 values \(the next one at byte 5\), over the limit$/);
  assert.match(checkJsonLimits(bytes('[[[[1]]]]'), limits({ depth: 3 }))!, /^nests arrays and objects 4 deep at byte 3, over the limit of 3$/);
  assert.match(
    checkJsonLimits(bytes('{"k": "0123456789"}'), limits({ stringBytes: 9, role: 'a plan' }))!,
    /^holds a string of 10 bytes at byte 6, over the limit of 9 for a plan$/,
  );
  assert.match(checkJsonLimits(bytes('{"0123456789": 1}'), limits({ stringBytes: 9 }))!, /string of 10 bytes at byte 1/, 'keys count as strings');
  assert.match(
    checkJsonLimits(bytes('["abc'), limits({ stringBytes: 2 }))!,
    /string of 3 or more bytes at byte 1/,
    'an unterminated string is measured to the end',
  );
  assert.equal(checkJsonLimits(bytes('"ab'), limits({ stringBytes: 2 })), null);
  const many = bytes(`[${'0,'.repeat(1_000_000)}0]`);
  const stopped = measureJson(many, limits({ items: 1000 }));
  assert.equal(stopped.shape.items, 1001, 'the count stops at the first value past the limit, not at the end of the text');
  assert.match(stopped.problem!, /more than 1,000 values \(the next one at byte 1,999\)/);
});

test('any bytes are measured without a throw: unterminated strings, a trailing backslash, lone closers, garbage, binary', () => {
  for (const text of ['"', '"\\', '\\', ']]]}}}', '}{', ',,,::', 'tru', '{"a"', '{"a":', '{"a" "b" "c"}', '[1 2 3]', '\u0000\u0001', '"\\u12"']) {
    const m = measureJson(bytes(text));
    assert.equal(m.problem, null, text);
    assert.ok(m.shape.items >= 0 && m.shape.depth >= 0);
  }
  assert.equal(shape('{"a" "b" "c"}').items, 3, 'a string after a key without a colon is a value: counted');
  assert.equal(shape(']]][1]').depth, 1, 'closers with nothing open do not go below zero');
  const binary = new Uint8Array(65536);
  const next = random(7);
  for (let i = 0; i < binary.length; i++) binary[i] = Math.floor(next() * 256);
  assert.doesNotThrow(() => measureJson(binary, limits({ items: 10, depth: 4, stringBytes: 100 })));
  const deep = bytes('['.repeat(200_000));
  assert.equal(shape(deep).depth, 200_000);
  assert.match(checkJsonLimits(deep, limits({ depth: 64 }))!, /65 deep at byte 64/);
  assert.equal(shape(bytes('\\'.repeat(1_000_001))).items, 1, 'backslashes outside a string are one bare token');
  assert.equal(shape(bytes(`"${'\\\\'.repeat(500_000)}`)).longestString, 1_000_000);
});

test('parseJsonWithin parses what is within its limits; refuses what is not before parsing, and what is not JSON, by name', () => {
  assert.deepEqual(parseJsonWithin(bytes('{"a": [1, "é"]}'), limits({ items: 4 }), 'plan.json'), { a: [1, 'é'] });
  assert.throws(
    () => parseJsonWithin(bytes('[1,2,3]'), limits({ items: 2, role: 'a manifest' }), 'manifest.json'),
    (e: unknown) => e instanceof JsonRefusedError && e.kind === 'limit' && /^manifest\.json holds more than 2 values .* for a manifest$/.test(e.message),
  );
  assert.throws(
    () => parseJsonWithin(bytes('{"schema": 1,'), NO_JSON_LIMITS, 'manifest.json'),
    (e: unknown) => e instanceof JsonRefusedError && e.kind === 'syntax' && /^manifest\.json is not valid JSON \(/.test(e.message),
  );
});

test('on random valid JSON the counts are JSON.parse’s own; on mutations of it nothing throws, and what parses is never undercounted', () => {
  const next = random(25);
  let parsedMutants = 0;
  for (let round = 0; round < 3000; round++) {
    const text = randomJson(next, 0);
    const value = JSON.parse(text) as unknown;
    const measured = shape(text);
    assert.deepEqual({ depth: measured.depth, items: measured.items }, parsedShape(value), text);
    const mutant = bytes(text);
    const edits = 1 + Math.floor(next() * 3);
    let mutated: Uint8Array = mutant;
    for (let e = 0; e < edits && mutated.length > 0; e++) {
      const at = Math.floor(next() * mutated.length);
      const byte = next() < 0.5 ? '"\\{}[],: 0a'.charCodeAt(Math.floor(next() * 11)) : Math.floor(next() * 256);
      const op = Math.floor(next() * 3);
      if (op === 0) mutated[at] = byte;
      else if (op === 1) mutated = Uint8Array.from([...mutated.subarray(0, at), byte, ...mutated.subarray(at)]);
      else mutated = Uint8Array.from([...mutated.subarray(0, at), ...mutated.subarray(at + 1)]);
    }
    const tight = limits({ items: 1 + Math.floor(next() * 20), depth: Math.floor(next() * 5), stringBytes: Math.floor(next() * 30) });
    let m: ReturnType<typeof measureJson> | undefined;
    assert.doesNotThrow(() => (m = measureJson(mutated, tight)));
    assert.doesNotThrow(() => measureJson(mutated));
    let again: unknown;
    try {
      again = JSON.parse(new TextDecoder().decode(mutated));
    } catch {
      continue;
    }
    parsedMutants++;
    // A mutant may repeat a key, of which JSON.parse keeps one: the count is then more than it builds, never less.
    const built = parsedShape(again);
    const full = measureJson(mutated).shape;
    assert.ok(full.items >= built.items && full.depth >= built.depth, `mutant ${new TextDecoder().decode(mutated)}`);
    if (m!.problem === null) assert.ok(built.items <= tight.items && built.depth <= tight.depth, 'what passes the limits is within them');
    try {
      parseJsonWithin(mutated, tight, 'x.json');
    } catch (error) {
      assert.ok(error instanceof JsonRefusedError, String(error));
    }
  }
  assert.ok(parsedMutants > 100, `mutants that still parse were tried (${parsedMutants})`);
});

test('the recorded JSON in test/fixtures is counted exactly as JSON.parse builds it', () => {
  const dirs = ['runs', 'diagnoses', 'monitor', 'checks', 'env/h100', 'events'];
  let files = 0;
  for (const dir of dirs)
    for (const name of readdirSync(join(ROOT, 'test/fixtures', dir)).filter((f) => f.endsWith('.json'))) {
      const text = new Uint8Array(readFileSync(join(ROOT, 'test/fixtures', dir, name)));
      const measured = measureJson(text).shape;
      assert.deepEqual({ depth: measured.depth, items: measured.items }, parsedShape(JSON.parse(new TextDecoder().decode(text))), `${dir}/${name}`);
      files++;
    }
  assert.ok(files > 30, `${files} files`);
});
