import assert from 'node:assert/strict';
import { test } from 'node:test';

import { channels, monitorTimelineId, type CallContext, type MonitorEvent } from '../../core/api/channels';
import type { DecodedNvmlSample } from '../../core/memory/nvml-sample-layout';
import { MonitorSessions } from '../../main/memory/monitor-sessions';
import type { NvmlSource } from '../../main/memory/nvml-source';
import { HeldResults } from '../../main/services/held-results';

// Issue 27: a monitoring session's id is the host's to make, given in the session's first event; a caller cannot
// name one, so two sessions never share an id (and never replace each other's held samples). NVML here is a stand-in
// with one device whose use grows by a MiB a sample: what the sessions do with it is the host's own code.
const MiB = 2 ** 20;
function standInNvml(): NvmlSource {
  let used = 100 * MiB;
  return {
    driverVersion: '580.00',
    devices: [{ index: 0, name: 'Stand-in GPU', uuid: 'GPU-00000000', totalBytes: 80 * 1024 * MiB }],
    mode: 'inline',
    inFlightSince: () => null,
    take: async (): Promise<DecodedNvmlSample> => {
      used += MiB;
      const device = { index: 0, usedBytes: used, freeBytes: 80 * 1024 * MiB - used, totalBytes: 80 * 1024 * MiB };
      return { sample: { timeUs: Date.now() * 1000, devices: [device], processes: [] }, reservedBytes: [null], processErrors: [], nativeUs: 1, processUs: 0 };
    },
    processName: async () => null,
    startThread: () => {
      throw new Error('inline mode has no thread');
    },
  };
}

/** A monitor.start call as a caller makes it: what it streams, its id once the first event gives it, and its answer. */
function startSession(sessions: MonitorSessions, request = { intervalMs: 20 }) {
  const events: MonitorEvent[] = [];
  const controller = new AbortController();
  let gotId!: (id: string) => void;
  const id = new Promise<string>((resolve) => (gotId = resolve));
  const context: CallContext<MonitorEvent> = {
    signal: controller.signal,
    emit: (event) => {
      events.push(event);
      if (event.kind === 'started') gotId(event.id);
    },
  };
  const answer = sessions.start(request, context);
  return { events, id, answer, cancel: () => controller.abort() };
}

const batches = async (events: MonitorEvent[], n: number) => {
  for (let started = Date.now(); events.filter((e) => e.kind === 'samples').length < n && Date.now() - started < 5000;)
    await new Promise((resolve) => setTimeout(resolve, 20));
};

test('two sessions started at once get ids the host made, different, each first; each is stopped and exported by its own', async () => {
  const held = new HeldResults();
  const sessions = new MonitorSessions(held, async () => standInNvml());
  const a = startSession(sessions);
  const b = startSession(sessions);
  const [idA, idB] = await Promise.all([a.id, b.id]);
  assert.match(idA, /^m-[0-9a-f-]{36}$/);
  assert.notEqual(idA, idB, 'two sessions never share an id');
  assert.deepEqual(a.events[0], { kind: 'started', id: idA }, 'the id is the first thing a session streams');
  assert.ok(channels['monitor.stop'].request.safeParse({ id: idA }).success, 'monitor.stop takes the id as the host made it');

  await batches(a.events, 1);
  await batches(b.events, 1);
  // Each session's samples are held under its own id: the two are not one series.
  const seriesA = held.samples(monitorTimelineId(idA), 'export');
  const seriesB = held.samples(monitorTimelineId(idB), 'export');
  assert.notEqual(seriesA, seriesB);
  assert.ok(seriesA.samples.length > 0 && seriesB.samples.length > 0);

  assert.equal(sessions.stop(idA), true);
  const report = await a.answer;
  assert.equal(report.end.kind, 'stopped', 'Stop ends it with its report');
  assert.equal(sessions.stop(idA), false, 'an ended session is not running');
  assert.ok(held.samples(monitorTimelineId(idA), 'export').samples.length > 0, 'its samples stay held for export once it has ended');

  // B still runs: cancelling its call stops it too.
  const before = b.events.length;
  await batches(b.events, b.events.filter((e) => e.kind === 'samples').length + 1);
  assert.ok(b.events.length > before, 'the other session went on sampling');
  b.cancel();
  await b.answer;
  assert.equal(sessions.stop(idB), false, 'a cancelled session is gone');
});

test('a caller cannot choose a session’s id; a reused id is no longer a way to take over held samples', () => {
  const asked = channels['monitor.start'].request.safeParse({ id: 'ui-1', intervalMs: 100 });
  assert.equal(asked.success, false);
  assert.match(asked.error!.issues.map((i) => i.message).join(' '), /Unrecognized key/);
});
