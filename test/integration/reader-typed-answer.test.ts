import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, test } from 'node:test';

import { stringifyTyped } from '../../core/api/typed-wire';
import { FRAME, frameBytes } from '../../core/readers/reader-protocol';
import { defaultReaderLauncher, ReaderError, runReader, useReaderLauncher, type ReaderLauncher } from '../../main/readers/reader-process';

// Issue 27: a reader's answer carries its typed arrays (a timeline's columns) as a body frame beside its JSON. The
// host puts them back in place, and refuses in words an answer whose references do not fit its body: a reader reads
// files from outside, so its answer is checked like one.
after(() => useReaderLauncher(defaultReaderLauncher));

const text = (value: string) => new TextEncoder().encode(value);

/** A reader that writes these frames and exits 0. */
const writing =
  (frames: Uint8Array[]): ReaderLauncher =>
  () => {
    const stdout = new PassThrough();
    let closed: (code: number | null, signal: NodeJS.Signals | null) => void = () => undefined;
    stdout.on('end', () => setImmediate(() => closed(0, null)));
    setImmediate(() => {
      for (const f of frames) stdout.write(f);
      stdout.end();
    });
    return { stdout, kill: () => undefined, onClose: (h) => (closed = h), onError: () => undefined, go: () => undefined };
  };

const job = { kind: 'memory-timelines', path: '/x.pickle', maxBytes: 1 << 20 } as const;

test('an answer’s typed arrays come back in place, as typed arrays with their values', async () => {
  const value = { timelines: [{ start: new Float64Array([1, 2.5, Infinity]), lane: new Uint8Array([3]), stack: new Int32Array([-1, 7]) }], notes: ['x'] };
  const { text: json, refs, body } = stringifyTyped(value);
  useReaderLauncher(writing([frameBytes(FRAME.body, body), frameBytes(FRAME.answer, text(`{"ok":true,"typed":${JSON.stringify(refs)},"value":${json}}`))]));
  const read = await runReader<typeof value>(job, 'The snapshot /x.pickle');
  assert.deepEqual(read.value, value);
  assert.ok(read.value.timelines[0]!.start instanceof Float64Array);
  assert.equal(read.body, null, 'the body is in the value now');
});

test('an answer whose references do not fit its body is refused in words, not handed on', async () => {
  const { text: json, refs } = stringifyTyped({ start: new Float64Array(4) });
  const cases: [string, Uint8Array[], RegExp][] = [
    ['no body at all', [frameBytes(FRAME.answer, text(`{"ok":true,"typed":${JSON.stringify(refs)},"value":${json}}`))], /lies past the body's 0 bytes/],
    [
      'a reference to a slot the value does not have',
      [
        frameBytes(FRAME.body, new Uint8Array(32)),
        frameBytes(FRAME.answer, text(`{"ok":true,"typed":[{"path":["end"],"type":"f64","offset":0,"length":4}],"value":${json}}`)),
      ],
      /names end, which the message does not hold/,
    ],
    ['references that are no list', [frameBytes(FRAME.answer, text(`{"ok":true,"typed":"all","value":${json}}`))], /not a list/],
  ];
  for (const [what, frames, words] of cases) {
    useReaderLauncher(writing(frames));
    await assert.rejects(
      runReader(job, 'The snapshot /x.pickle'),
      (e: unknown) =>
        e instanceof ReaderError &&
        e.kind === 'crashed' &&
        /^The snapshot \/x\.pickle was not opened: its reader's answer is not valid \(/.test(e.message) &&
        words.test(e.message),
      what,
    );
  }
});

test('a read slot stays taken until its reader is gone, not only answered: at most 2 s after the answer when it lingers', async () => {
  // Readers that answer, are asked to end, and never close: each holds its slot for the wait, then frees it.
  const answered: number[] = [];
  useReaderLauncher(() => {
    const stdout = new PassThrough();
    setImmediate(() => stdout.write(frameBytes(FRAME.answer, text('{"ok":true,"value":1}'))));
    return { stdout, kill: () => undefined, onClose: () => undefined, onError: () => undefined, go: () => undefined };
  });
  const started = performance.now();
  const reads = Array.from({ length: 3 }, () => runReader(job, 'The snapshot /x.pickle').then(() => answered.push(performance.now() - started)));
  await Promise.all(reads);
  assert.ok(answered[0]! < 1000 && answered[1]! < 1000, `the first two at once: ${answered.map(Math.round)}`);
  assert.ok(answered[2]! >= 1900, `the third once a slot was freed, 2 s after its reader's answer: ${Math.round(answered[2]!)} ms`);
  // The third's slot, too, is freed 2 s after its answer: the next test starts with both free.
  await new Promise((resolve) => setTimeout(resolve, 2100));
});

test('a read cancelled while it waits for a slot leaves the line: the slot freed next goes to the read still waiting', async () => {
  // Two readers hold both slots until told to answer; they close as they answer.
  const answerers: (() => void)[] = [];
  useReaderLauncher(() => {
    const stdout = new PassThrough();
    let closed: (code: number | null, signal: NodeJS.Signals | null) => void = () => undefined;
    answerers.push(() => {
      stdout.end(frameBytes(FRAME.answer, text('{"ok":true,"value":1}')));
      setImmediate(() => closed(0, null));
    });
    return { stdout, kill: () => undefined, onClose: (h) => (closed = h), onError: () => undefined, go: () => undefined };
  });
  const holding = [runReader(job, 'The snapshot /x.pickle'), runReader(job, 'The snapshot /x.pickle')];
  await new Promise((r) => setImmediate(r));
  const cancelled = new AbortController();
  const gaveUp = runReader(job, 'The snapshot /x.pickle', { signal: cancelled.signal });
  const waits = runReader(job, 'The snapshot /x.pickle');
  cancelled.abort();
  await assert.rejects(gaveUp, (e: unknown) => e instanceof ReaderError && e.kind === 'cancelled');
  answerers[0]!();
  await holding[0];
  for (let i = 0; i < 50 && answerers.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(answerers.length, 3, 'the waiting read started once the first slot was free');
  answerers[2]!();
  answerers[1]!();
  await Promise.all([waits, holding[1]]);
});
