import type { WebSocket } from 'ws';

import { answersBinary, isChannelName } from '../../core/api/channels';
import { encodeMessage } from '../../core/api/typed-wire';
import { formatBytes } from '../../core/format';
import { dispatch, type createHandlers } from '../host-api';
import { READER_LIMITS } from '../readers/reader-process';

/** Calls in flight on one socket, by id: a cancel message, or the socket closing, aborts them. */
const MAX_CALLS_PER_SOCKET = 64;
/** The largest binary answer: what a reader may answer with timelines, whose columns the host passes on as they came. */
export const MAX_BINARY_ANSWER_BYTES = READER_LIMITS['memory-timelines'].answerBytes;

/**
 * An API message: a call ({id, channel, request}) or a cancel ({id, cancel: true}), with an id that is a
 * number or a short string. null for anything else.
 */
export function parseMessage(text: string): { id: number | string | null; channel: unknown; request: unknown; cancel: boolean } | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const { id, channel, request, cancel } = value as Record<string, unknown>;
  const validId = id === undefined || id === null || (typeof id === 'number' && Number.isFinite(id)) || (typeof id === 'string' && id.length <= 64);
  if (!validId) return null;
  return { id: (id as number | string | undefined) ?? null, channel, request, cancel: cancel === true };
}

/**
 * A message as it goes to the browser: JSON text, or — an answer its channel declares binary (answersBinary: a
 * timeline's columns) that holds typed arrays — one binary frame with the arrays as bytes (core/api/typed-wire.ts); a
 * binary answer over `maxBinaryBytes` is a refusal instead. Only those answers are looked through for typed arrays.
 */
export function frameOf(message: { id: unknown; [key: string]: unknown }, binary: boolean, maxBinaryBytes = MAX_BINARY_ANSWER_BYTES): string | Uint8Array {
  if (!binary) return JSON.stringify(message);
  const data = encodeMessage(message);
  if (typeof data === 'string' || data.byteLength <= maxBinaryBytes) return data;
  const refusal = `The answer is ${formatBytes(data.byteLength)}, over the ${formatBytes(maxBinaryBytes)} the host sends at once.`;
  return JSON.stringify({ id: message.id, envelope: { ok: false, error: { code: 'TOO_LARGE', message: refusal } } });
}

/** The typed API on one WebSocket: each call answered (with its events) under its id, cancelled by id or when the socket closes. */
export function serveSocket(ws: WebSocket, handlers: ReturnType<typeof createHandlers>): void {
  const calls = new Map<number | string, AbortController>();
  // An invalid UTF-8 frame, a frame over the size limit or a broken connection arrives here: close, never throw.
  ws.on('error', () => ws.terminate());
  ws.on('close', () => {
    for (const call of calls.values()) call.abort();
    calls.clear();
  });
  const send = (value: { id: unknown; [key: string]: unknown }, binary = false) => {
    if (ws.readyState === ws.OPEN) ws.send(frameOf(value, binary), () => undefined);
  };
  const bad = (message: string, id: number | string | null = null) => send({ id, envelope: { ok: false, error: { code: 'BAD_MESSAGE', message } } });
  ws.on('message', (data, isBinary) => {
    // Only the host's answers are binary: what the browser sends is JSON text.
    if (isBinary) return bad('Messages are JSON text, not binary frames.');
    const message = parseMessage(String(data));
    if (!message) return bad('The message is not a JSON object of the form {"id", "channel", "request"} or {"id", "cancel": true}.');
    if (message.cancel) {
      if (message.id !== null) calls.get(message.id)?.abort();
      return;
    }
    const id = message.id;
    // A call needs an id: it is how its answer, its events and its cancel find it.
    if (id === null) return bad('A call needs an "id" (a number or a short string).');
    if (calls.has(id)) return bad(`A call with id ${JSON.stringify(id)} is already in flight on this connection.`, id);
    if (calls.size >= MAX_CALLS_PER_SOCKET) return bad(`At most ${MAX_CALLS_PER_SOCKET} calls may be in flight on one connection.`, id);
    const controller = new AbortController();
    calls.set(id, controller);
    const context = { signal: controller.signal, emit: (event: unknown) => send({ id, event }) };
    const binary = isChannelName(message.channel) && answersBinary(message.channel);
    void dispatch(handlers, message.channel, message.request, context)
      .then((envelope) => send({ id, envelope }, binary && envelope.ok))
      .catch(() => send({ id, envelope: { ok: false, error: { code: 'HOST_ERROR', message: 'The host could not answer this message.' } } }))
      .finally(() => {
        if (calls.get(id) === controller) calls.delete(id);
      });
  });
}
