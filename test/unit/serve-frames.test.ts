import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { answersBinary, channels, type ChannelName } from '../../core/api/channels';
import { decodeMessageFrame } from '../../core/api/typed-wire';
import { frameOf, MAX_BINARY_ANSWER_BYTES } from '../../main/serve/serve-socket';
import { READER_LIMITS } from '../../main/readers/reader-process';
import { ROOT } from '../helpers/cli';

const answer = (n: number) => ({ id: 9, envelope: { ok: true, value: { start: new Float64Array(n) } } });

test('serve sends an answer with columns as one binary frame, and every other message as the JSON text it was', () => {
  const frame = frameOf(answer(100), true);
  assert.ok(frame instanceof Uint8Array);
  assert.deepEqual(decodeMessageFrame(frame), answer(100));
  const plain = { id: 3, event: { kind: 'phase', phase: 'read' } };
  assert.equal(frameOf(plain, false), JSON.stringify(plain));
  // A binary channel's answer that holds no typed array (no timeline in the file) is text too.
  const none = { id: 4, envelope: { ok: true, value: { timelines: [], timelineIds: [] } } };
  assert.equal(frameOf(none, true), JSON.stringify(none));
});

test('a message of a channel not declared binary is JSON.stringify’s own text: nothing looks through it for typed arrays', () => {
  const outcome = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs/never-frees.json'), 'utf8')) as unknown;
  const message = { id: 'run-1', envelope: { ok: true, value: outcome } };
  const text = frameOf(message, false);
  assert.equal(typeof text, 'string');
  assert.equal(text, JSON.stringify(message), 'the very text, as a text frame');
  // What decides is the declaration, not a walk: an array where none is declared is written as JSON writes one.
  assert.equal(frameOf({ id: 1, envelope: { ok: true, value: new Uint8Array([7]) } }, false), '{"id":1,"envelope":{"ok":true,"value":{"0":7}}}');
});

test('the channels whose answers may hold typed arrays are those that answer timelines, and only they', () => {
  const binary = (Object.keys(channels) as ChannelName[]).filter(answersBinary).sort();
  assert.deepEqual(binary, ['bundle.open', 'memory.open']);
});

test('a binary answer over the limit is a refusal in words under its id, never sent', () => {
  const refusal = frameOf(answer(1000), true, 4096);
  assert.equal(typeof refusal, 'string');
  const { id, envelope } = JSON.parse(refusal as string) as { id: number; envelope: { ok: boolean; error: { code: string; message: string } } };
  assert.equal(id, 9);
  assert.equal(envelope.error.code, 'TOO_LARGE');
  assert.match(envelope.error.message, /^The answer is 7\.\d+ KiB, over the 4 KiB the host sends at once\.$/);
  assert.ok(frameOf(answer(400), true, 4096) instanceof Uint8Array, 'one under the limit goes');
  assert.equal(MAX_BINARY_ANSWER_BYTES, READER_LIMITS['memory-timelines'].answerBytes, 'the limit is the timeline reader’s own');
});
