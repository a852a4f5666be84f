import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { deserialize, serialize } from 'node:v8';

import * as z from 'zod';

import { LastParse, sameData } from '../../core/api/last-parse';
import { mulberry32 } from '../../core/plan/buffer-data';
import { launchPlanSchema } from '../../core/plan/plan-schema';
import { requestIdSchema, runnerRequestSchema } from '../../core/runner/protocol';

const ROOT = join(__dirname, '../../..');
const planFile = JSON.parse(readFileSync(join(ROOT, 'samples/vector-add/plan.json'), 'utf8')) as Record<string, unknown>;
const source = readFileSync(join(ROOT, 'samples/vector-add/vector_add.cu'), 'utf8');
const plan = launchPlanSchema.parse({ ...planFile, kernels: [{ id: 'add', entry: 'vecAdd', source, sourceName: 'vector_add.cu' }] });
const image = new Uint8Array(readFileSync(join(ROOT, 'test/fixtures/vector_add.sm_90.cubin')));
/** A run request as the host sends it; each call a new copy, as the IPC channel delivers it. */
const request = (id: number, change: (r: Record<string, unknown>) => void = () => undefined): Record<string, unknown> => {
  const r = deserialize(
    serialize({ id, type: 'run', plan, modules: [{ kernel: plan.kernels[0]!.id, symbol: '_Z6vecAddPKfS0_Pfi', image }], timeLimitMs: 30_000 }),
  );
  change(r);
  return r;
};
const planOf = (r: Record<string, unknown>) => r['plan'] as { steps: Record<string, unknown>[]; kernels: Record<string, unknown>[] };

test('data that crossed a process boundary twice is the same data; one change anywhere makes it other data', () => {
  assert.ok(sameData(request(1), request(1)));
  const variants: [string, (r: Record<string, unknown>) => void][] = [
    ['a nested number', (r) => (planOf(r).steps[0]!['op'] = 'free')],
    ['a key added', (r) => (planOf(r).kernels[0]!['extra'] = 1)],
    ['a key removed', (r) => delete r['timeLimitMs']],
    ['an array one shorter', (r) => planOf(r).steps.pop()],
    ['0 against -0', (r) => (r['timeLimitMs'] = -0)],
    ['one byte of the image (aligned)', (r) => ((r['modules'] as { image: Uint8Array }[])[0]!.image[8]! ^= 1)],
    ['the image one byte shorter', (r) => ((r['modules'] as { image: Uint8Array }[])[0]!.image = image.subarray(0, image.length - 1))],
    ['the image as a Buffer one byte off, not 4-aligned', (r) => ((r['modules'] as { image: Uint8Array }[])[0]!.image = flipped(image, image.length - 1, 1))],
    ['the image as other bytes of the same length', (r) => ((r['modules'] as { image: Uint8Array }[])[0]!.image = new Uint8Array(image.length))],
    ['the image as a Float32Array', (r) => ((r['modules'] as { image: unknown }[])[0]!.image = new Float32Array(image.buffer.slice(0, image.length & ~3)))],
    ['a Map where an object was', (r) => (r['plan'] = new Map(Object.entries(planOf(r))))],
    ['a key named __proto__', (r) => (r['plan'] = JSON.parse(`{"__proto__": 1, ${JSON.stringify(planOf(r)).slice(1)}`))],
  ];
  for (const [what, change] of variants) assert.equal(sameData(request(1, change), request(1)), false, what);
  // The same bytes at another offset of another buffer are the same bytes.
  assert.ok(
    sameData(
      request(1, (r) => ((r['modules'] as { image: Uint8Array }[])[0]!.image = flipped(image, 3, 0))),
      request(1),
    ),
  );
  assert.ok(sameData(NaN, NaN));
  assert.ok(!sameData(new Date(0), new Date(0)), 'only data of the kinds a message carries is compared');
});

/** A copy of `bytes` at offset `at` of a larger buffer, byte `flip` xor-ed with `by`. */
function flipped(bytes: Uint8Array, at: number, by: number, flip = bytes.length - 1): Uint8Array {
  const out = new Uint8Array(new ArrayBuffer(bytes.length + at)).subarray(at);
  out.set(bytes);
  out[flip]! ^= by;
  return out;
}

test('5,000 random one-leaf changes to a plan: each is other data exactly when the leaf is another value', () => {
  const rand = mulberry32(27);
  const base = JSON.parse(JSON.stringify(plan)) as unknown;
  const leaves: (string | number)[][] = [];
  const walk = (v: unknown, path: (string | number)[]) => {
    if (v !== null && typeof v === 'object') for (const [k, c] of Object.entries(v)) walk(c, [...path, Array.isArray(v) ? Number(k) : k]);
    else leaves.push(path);
  };
  walk(base, []);
  const values = [0, -0, 1, -1, 2 ** 53, 0.5, '', 'x', 'a', true, false, null, NaN, [], {}];
  for (let i = 0; i < 5000; i++) {
    const copy = structuredClone(base) as Record<string, unknown>;
    const path = leaves[Math.floor(rand() * leaves.length)]!;
    let at = copy as Record<string | number, unknown>;
    for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
    const before = at[path.at(-1)!];
    const value = values[Math.floor(rand() * values.length)];
    at[path.at(-1)!] = value;
    const same = Object.is(before, value);
    assert.equal(sameData(copy, base), same, `${path.join('.')}: ${String(before)} -> ${String(value)}`);
  }
});

test('a hostile input nested far deeper than the known value is compared in bounded depth, not by the stack', () => {
  let deep: unknown = { id: 1 };
  for (let i = 0; i < 200_000; i++) deep = { plan: deep };
  assert.equal(sameData(deep, request(1)), false);
  let known: unknown = 1;
  for (let i = 0; i < 100; i++) known = [known];
  assert.equal(sameData(structuredClone(known), known), false, 'past 64 levels nothing is equal: the schema then decides');
});

test('a re-run request is the remembered parse with its own id; another plan, a bad id or a failure are parsed anew', () => {
  let walks = 0;
  const counted = runnerRequestSchema.superRefine(() => void walks++);
  const requests = new LastParse(counted, { varying: { field: 'id', schema: requestIdSchema } });
  const first = requests.safeParse(request(1));
  assert.ok(first.success);
  assert.equal(walks, 1);

  const again = requests.safeParse(request(2));
  assert.ok(again.success);
  assert.equal(walks, 1, 'the same request with another id is not walked again');
  assert.deepEqual(again.data, runnerRequestSchema.parse(request(2)), 'and is what the schema makes of it');
  assert.equal(again.data.id, 2);

  const badId = requests.safeParse(request(-1));
  assert.equal(badId.success, false, 'the id is checked by its own rule');
  assert.equal(walks, 2);
  assert.deepEqual(
    badId.error?.issues.map((i) => i.path),
    runnerRequestSchema.safeParse(request(-1)).error?.issues.map((i) => i.path),
  );

  const other = requests.safeParse(request(3, (r) => (r['timeLimitMs'] = 1000)));
  assert.ok(other.success && other.data.type === 'run' && other.data.timeLimitMs === 1000);
  assert.equal(walks, 3);

  const broken = requests.safeParse(request(4, (r) => (planOf(r).steps[0]!['op'] = 'explode')));
  assert.equal(broken.success, false);
  assert.ok(requests.safeParse(request(5, (r) => (planOf(r).steps[0]!['op'] = 'explode'))).success === false, 'a failure is not remembered');
  assert.equal(walks, 3, 'superRefine runs only on what passed the object rules');

  const noId = requests.safeParse(request(6, (r) => delete r['id']));
  assert.equal(noId.success, false);
});

test('without a varying field, only the very same data is remembered', () => {
  let walks = 0;
  const numbers = new LastParse(z.array(z.number()).transform((xs) => (walks++, xs.length)));
  assert.deepEqual(numbers.safeParse([1, 2]), { success: true, data: 2 });
  assert.deepEqual(numbers.safeParse([1, 2]), { success: true, data: 2 });
  assert.equal(walks, 1, 'the same data again is not walked');
  assert.equal(numbers.safeParse([1, '2']).success, false);
  assert.deepEqual(numbers.safeParse([1, 2, 3]), { success: true, data: 3 });
  assert.equal(walks, 2);
});

test('as the runner remembers: the last two run requests, in turn, and a page request between them evicts neither', () => {
  let walks = 0;
  const requests = new LastParse(
    runnerRequestSchema.superRefine(() => void walks++),
    { varying: { field: 'id', schema: requestIdSchema }, remember: (r) => r.type === 'run', capacity: 2 },
  );
  const a = (id: number) => request(id);
  const b = (id: number) => request(id, (r) => (r['timeLimitMs'] = 1000));
  const c = (id: number) => request(id, (r) => (r['timeLimitMs'] = 2000));
  const page = (id: number) => ({ id, type: 'page', runId: 'x', buffer: 'c', offset: id, count: 10 });
  for (const make of [a, b, a, b, page, a, page, b]) assert.ok(requests.safeParse(make(7)).success);
  assert.equal(walks, 2 + 2, 'a and b walked once each; each page request walked');
  assert.ok(requests.safeParse(c(8)).success, 'a third plan');
  assert.ok(requests.safeParse(a(9)).success, 'a: the least recent, gone');
  assert.equal(walks, 2 + 2 + 2);
  assert.ok(requests.safeParse(c(10)).success);
  assert.equal(walks, 6, 'c stayed');
});

test('a copy made before the parse is what is parsed and remembered; an input that cannot be copied is parsed, not remembered', () => {
  let walks = 0;
  const schema = z.object({ n: z.number() }).transform((v) => (walks++, v.n));
  const doubling = new LastParse(schema, { keep: (input) => ({ n: (input as { n: number }).n * 2 }) });
  assert.deepEqual(doubling.safeParse({ n: 2 }), { success: true, data: 4 }, 'the copy was parsed');
  assert.deepEqual(doubling.safeParse({ n: 4 }), { success: true, data: 4 }, 'and remembered as the copy it is');
  assert.equal(walks, 1);
  const cloning = new LastParse(schema, { keep: (input) => structuredClone(input) });
  const withFunction = { n: 1, f: () => 1 };
  assert.deepEqual(cloning.safeParse(withFunction), { success: true, data: 1 });
  assert.deepEqual(cloning.safeParse({ n: 1, f: () => 1 }), { success: true, data: 1 });
  assert.equal(walks, 3, 'not remembered: it could not be copied');
});

test('a key named __proto__ is never equal, even to the same; the walk goes no deeper than the known value', () => {
  assert.equal(sameData(JSON.parse('{"__proto__": 1}'), JSON.parse('{"__proto__": 1}')), false);
  let known: unknown = { id: 1 };
  let hostile: unknown = { id: 1 };
  for (let i = 0; i < 10; i++) known = { plan: known };
  for (let i = 0; i < 200_000; i++) hostile = { plan: hostile };
  assert.equal(sameData(hostile, known), false);
});
