import WebSocket from 'ws';

import type { Envelope } from '../../core/api/channels';
import { decodeMessageFrame } from '../../core/api/typed-wire';
import type { ServeProcess } from './serve-process';

/** A token holder's connection to a running serve: one call at a time, answered with its envelope. */
export interface ServeApi {
  call(channel: string, request: unknown): Promise<Envelope<unknown>>;
  close(): void;
}

export function connectApi(serve: ServeProcess): Promise<ServeApi> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${serve.port}/api?token=${serve.token}`, { origin: `http://127.0.0.1:${serve.port}` });
    let next = 0;
    const waiting = new Map<number, (envelope: Envelope<unknown>) => void>();
    ws.on('message', (data, isBinary) => {
      // A binary frame is an answer that holds typed arrays, as the browser reads it (renderer/api/transport.ts).
      const m = (isBinary ? decodeMessageFrame(data as Buffer) : JSON.parse(String(data))) as { id: number; envelope?: Envelope<unknown> };
      if (m.envelope) waiting.get(m.id)?.(m.envelope);
    });
    ws.on('error', reject);
    ws.on('open', () =>
      resolve({
        call: (channel, request) =>
          new Promise((done) => {
            const id = ++next;
            waiting.set(id, done);
            ws.send(JSON.stringify({ id, channel, request }));
          }),
        close: () => ws.close(),
      }),
    );
  });
}
