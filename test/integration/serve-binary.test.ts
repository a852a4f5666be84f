import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import WebSocket from 'ws';

import { decodeMessageFrame } from '../../core/api/typed-wire';
import { snapshotTimelines } from '../../core/memory/memory-open';
import { buildSnapshotModel } from '../../core/memory/snapshot-model';
import { decodeTimeline, encodeTimeline, type TimelineWire } from '../../core/memory/timeline-wire';
import { unpickle } from '../../core/memory/unpickle';
import { readBundle } from '../../main/bundle/read-bundle';
import { bundleView } from '../../core/bundle/bundle-view';
import { ROOT } from '../helpers/cli';
import { startServe, type ServeProcess } from '../helpers/serve';

// Issue 27: a timeline's columns cross serve's WebSocket as bytes. An answer that holds typed arrays is one binary
// frame (core/api/typed-wire.ts), which the browser reads back into the typed arrays the host read; everything else
// (events, refusals, answers without columns) stays JSON text.
const work = realpathSync(mkdtempSync(join(tmpdir(), 'wb-serve-binary-')));
const SNAPSHOT = join(ROOT, 'test/fixtures/snapshots/h100/leak.pickle');
const BUNDLE = join(ROOT, 'test/fixtures/bundles/never-frees.zip');

type Frame = { binary: boolean; bytes: number; message: { id?: unknown; envelope?: { ok: boolean; value?: unknown }; event?: unknown } };

let serve: ServeProcess;
let ws: WebSocket;
const frames: Frame[] = [];

before(async () => {
  serve = await startServe({ GPU_WORKBENCH_STATE_DIR: join(work, 'state'), GPU_WORKBENCH_CACHE_DIR: join(work, 'cache') }, 'cli', ['--root', work]);
  ws = new WebSocket(`ws://127.0.0.1:${serve.port}/api?token=${serve.token}`, { origin: `http://127.0.0.1:${serve.port}` });
  ws.on('message', (data: Buffer, binary) => {
    frames.push({ binary, bytes: data.byteLength, message: (binary ? decodeMessageFrame(data) : JSON.parse(String(data))) as Frame['message'] });
  });
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
});
after(async () => {
  ws.close();
  await serve.stop();
});

/** A call's frames, its answer last. */
async function call(id: number, channel: string, request: unknown): Promise<Frame[]> {
  ws.send(JSON.stringify({ id, channel, request }));
  for (let waited = 0; waited < 60_000; waited += 20) {
    const mine = frames.filter((f) => f.message.id === id);
    if (mine.some((f) => f.message.envelope)) return mine;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no answer to ${channel}`);
}

function assertTypedColumns(wire: TimelineWire): void {
  const a = wire.allocations;
  const s = wire.spans;
  for (const c of [a.start, a.end, a.address, a.size, s.start, s.end, ...wire.counters.flatMap((k) => [k.time, k.value])]) assert.ok(c instanceof Float64Array);
  for (const c of [a.stack, a.step, a.label, s.label, s.step]) assert.ok(c instanceof Int32Array);
  assert.ok(s.lane instanceof Uint8Array);
}

test('memory.open of a recorded snapshot: one binary answer whose columns are the typed arrays the host read, its phases as text', async () => {
  const mine = await call(1, 'memory.open', { path: SNAPSHOT });
  const answer = mine.at(-1)!;
  assert.equal(answer.binary, true, 'the answer with columns is a binary frame');
  assert.ok(
    mine.slice(0, -1).every((f) => !f.binary && f.message.event),
    'its phase events are JSON text',
  );
  assert.equal(answer.message.envelope?.ok, true, JSON.stringify(answer.message.envelope).slice(0, 300));
  const opened = answer.message.envelope!.value as { timelines: TimelineWire[]; timelineIds: string[] };

  const read = snapshotTimelines(buildSnapshotModel(unpickle(new Uint8Array(readFileSync(SNAPSHOT)))), 'leak.pickle').map(encodeTimeline);
  assert.equal(opened.timelines.length, read.length);
  opened.timelines.forEach((wire, i) => {
    assertTypedColumns(wire);
    assert.deepEqual(wire, read[i], 'the same columns, values and envelope as the snapshot read here');
    assert.ok(decodeTimeline(wire).allocations.count > 0, 'and the renderer’s checks take it as it came');
  });
  assert.equal(opened.timelineIds.length, read.length);

  const columnBytes = read.reduce((n, w) => n + w.allocations.start.byteLength * 4 + w.allocations.stack.byteLength * 3, 0);
  assert.ok(answer.bytes < columnBytes + 256 * 1024, `${answer.bytes} bytes for ${columnBytes} bytes of allocation columns: no text encoding`);
});

test('bundle.open: the run’s timeline arrives as typed arrays equal to the bundle’s own', async () => {
  const mine = await call(2, 'bundle.open', { path: BUNDLE });
  const answer = mine.at(-1)!;
  assert.equal(answer.binary, true);
  const view = answer.message.envelope!.value as { timelines: TimelineWire[] };
  const opened = await readBundle(BUNDLE);
  const own = bundleView(BUNDLE, opened.manifest, opened.entries);
  assert.equal(view.timelines.length, 1);
  assertTypedColumns(view.timelines[0]!);
  assert.deepEqual(view.timelines[0], own.timelines[0]);
});

test('answers without columns stay JSON text, and the browser may still send no binary frame', async () => {
  const info = await call(3, 'app.info', {});
  assert.equal(info.at(-1)!.binary, false);
  // A run's outcome (its event log and read-backs: the largest answers with no columns) is text, as JSON writes it.
  const run = (await call(5, 'run.open', { path: join(ROOT, 'test/fixtures/runs/never-frees.json') })).at(-1)!;
  assert.equal(run.binary, false);
  assert.equal(run.message.envelope?.ok, true);
  // A refusal of a channel that answers columns is text too: only an answer that holds them is a binary frame.
  const refused = (await call(6, 'memory.open', { path: join(work, 'no-such.pickle') })).at(-1)!;
  assert.equal(refused.binary, false);
  assert.equal(refused.message.envelope?.ok, false);
  const before = frames.length;
  ws.send(Buffer.from(JSON.stringify({ id: 4, channel: 'app.info', request: {} })), { binary: true });
  for (let waited = 0; frames.length === before && waited < 5000; waited += 20) await new Promise((r) => setTimeout(r, 20));
  const refusal = frames.at(-1)!;
  assert.equal(refusal.binary, false);
  assert.deepEqual((refusal.message.envelope as unknown as { error: { code: string } }).error.code, 'BAD_MESSAGE');
});
