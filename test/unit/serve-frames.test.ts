import assert from 'node:assert/strict';
import { test } from 'node:test';

import { decodeMessageFrame } from '../../core/api/typed-wire';
import { frameOf, MAX_BINARY_ANSWER_BYTES } from '../../main/serve/serve-socket';
import { READER_LIMITS } from '../../main/readers/reader-process';

const answer = (n: number) => ({ id: 9, envelope: { ok: true, value: { start: new Float64Array(n) } } });

test('serve sends an answer with columns as one binary frame, and every other message as the JSON text it was', () => {
  const frame = frameOf(answer(100));
  assert.ok(frame instanceof Uint8Array);
  assert.deepEqual(decodeMessageFrame(frame), answer(100));
  const plain = { id: 3, event: { kind: 'phase', phase: 'read' } };
  assert.equal(frameOf(plain), JSON.stringify(plain));
});

test('a binary answer over the limit is a refusal in words under its id, never sent', () => {
  const refusal = frameOf(answer(1000), 4096);
  assert.equal(typeof refusal, 'string');
  const { id, envelope } = JSON.parse(refusal as string) as { id: number; envelope: { ok: boolean; error: { code: string; message: string } } };
  assert.equal(id, 9);
  assert.equal(envelope.error.code, 'TOO_LARGE');
  assert.match(envelope.error.message, /^The answer is 7\.\d+ KiB, over the 4 KiB the host sends at once\.$/);
  assert.ok(frameOf(answer(400), 4096) instanceof Uint8Array, 'one under the limit goes');
  assert.equal(MAX_BINARY_ANSWER_BYTES, READER_LIMITS['memory-timelines'].answerBytes, 'the limit is the timeline reader’s own');
});
