import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import type { Envelope } from '../../core/api/channels';
import { validateChromeTrace } from '../helpers/chrome-trace';
import { ROOT } from '../helpers/cli';
import { startServe, type ServeProcess } from '../helpers/serve';
import { connectApi, type ServeApi } from '../helpers/serve-api';

// Issue 27: data the host made stays on the host. A result it opened is named by the id it answered with; run.save,
// bundle.preview, bundle.export and memory.export take that id, through serve's own dispatch, and an id it no longer
// holds (from another session of the host) is refused in words that say what to do.
const work = realpathSync(mkdtempSync(join(tmpdir(), 'wb-held-')));
const RESULT = join(ROOT, 'test/fixtures/runs/never-frees.json');
const env = { GPU_WORKBENCH_STATE_DIR: join(work, 'state'), GPU_WORKBENCH_CACHE_DIR: join(work, 'cache') };

let serve: ServeProcess;
let api: ServeApi;
before(async () => {
  serve = await startServe(env, 'cli', ['--root', work]);
  api = await connectApi(serve);
});
after(async () => {
  api.close();
  await serve.stop();
});

function answered<T>(envelope: Envelope<unknown>): T {
  assert.ok(envelope.ok, JSON.stringify(envelope).slice(0, 400));
  return (envelope as { value: T }).value;
}
function refused(envelope: Envelope<unknown>, code: string): string {
  assert.equal(envelope.ok, false, `expected a refusal (${code}), got ${JSON.stringify(envelope).slice(0, 300)}`);
  const { error } = envelope as { ok: false; error: { code: string; message: string } };
  assert.equal(error.code, code, error.message);
  return error.message;
}

let outcomeId = '';
let reportId = '';

test('run.open answers the outcome with its id; run.save by that id writes the host’s own outcome, without the id', async () => {
  const opened = answered<{ outcomeId: string; status: string; diagnosis: { headline: string } }>(await api.call('run.open', { path: RESULT }));
  assert.match(opened.outcomeId, /^run-[0-9a-f-]{36}$/);
  outcomeId = opened.outcomeId;
  const path = join(work, 'saved.json');
  assert.deepEqual(answered(await api.call('run.save', { path, outcomeId })), { path });
  const saved = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  const { outcomeId: _id, ...outcome } = opened;
  assert.deepEqual(saved, outcome, 'the file holds the outcome the host answered');
  assert.equal('outcomeId' in saved, false, 'an id of this session never goes into a file');
  // The request carries the id, never the data: an outcome sent back is refused before any handler sees it.
  refused(await api.call('run.save', { path, outcome }), 'BAD_REQUEST');
});

test('bundle.preview and bundle.export by the outcome’s id: what would go in, then the zip', async () => {
  const request = { plan: null, outcomeId, origin: 'the result never-frees.json', includeSources: false };
  const preview = answered<{ files: { name: string }[] }>(await api.call('bundle.preview', request));
  assert.ok(
    preview.files.some((f) => f.name === 'result.json'),
    preview.files.map((f) => f.name).join(', '),
  );
  const path = join(work, 'b.zip');
  const done = answered<{ path: string; files: { name: string }[] }>(await api.call('bundle.export', { ...request, path }));
  assert.equal(done.path, path);
  assert.deepEqual(
    done.files.map((f) => f.name),
    preview.files.map((f) => f.name),
  );
});

test('a sanitizer report opened is answered with its id, and a bundle names it by that id: sanitizer.json goes in', async () => {
  const report = answered<{ reportId: string; groups: unknown[] }>(
    await api.call('sanitize.open', { xmlPath: null, textPath: join(ROOT, 'test/fixtures/sanitizer/memcheck-oob.txt') }),
  );
  assert.match(report.reportId, /^sanitizer-[0-9a-f-]{36}$/);
  reportId = report.reportId;
  const preview = answered<{ files: { name: string }[] }>(
    await api.call('bundle.preview', { plan: null, outcomeId, origin: 'the result never-frees.json', includeSources: false, sanitizerId: reportId }),
  );
  assert.ok(
    preview.files.some((f) => f.name === 'sanitizer.json'),
    preview.files.map((f) => f.name).join(', '),
  );
  // The report itself sent back is refused before any handler sees it.
  refused(await api.call('bundle.preview', { plan: null, outcomeId, origin: 'x', sanitizer: report }), 'BAD_REQUEST');
});

test('memory.export by id: a run’s timeline (its outcomeId), and a file’s (the id memory.open gave), as traces Perfetto opens', async () => {
  const runTrace = join(work, 'run.trace.json');
  const run = answered<{ events: number }>(await api.call('memory.export', { format: 'trace', path: runTrace, timelineId: outcomeId }));
  assert.ok(run.events > 0);
  assert.ok(
    (validateChromeTrace(readFileSync(runTrace, 'utf8')).get('i') ?? []).some((e) => /never freed/.test(e.name)),
    'its leaks are instants',
  );

  const opened = answered<{ timelines: unknown[]; timelineIds: string[] }>(await api.call('memory.open', { path: RESULT }));
  assert.equal(opened.timelineIds.length, opened.timelines.length);
  const fileTrace = join(work, 'file.trace.json');
  const file = answered<{ events: number }>(await api.call('memory.export', { format: 'trace', path: fileTrace, timelineId: opened.timelineIds[0] }));
  assert.equal(file.events, run.events, 'the same run, opened as a file: the same timeline');
  validateChromeTrace(readFileSync(fileTrace, 'utf8'));
});

test('an id from another session of the host is refused in words that say what happened and what to do; nothing is written', async () => {
  api.close();
  await serve.stop();
  serve = await startServe(env, 'cli', ['--root', work]);
  api = await connectApi(serve);
  const path = join(work, 'again.json');
  assert.match(
    refused(await api.call('run.save', { path, outcomeId }), 'HELD_GONE'),
    /^The workbench no longer holds this run’s result \(it keeps the newest it made or opened, .*only while it runs\): run it again \(or open its result file again\), then save it\.$/,
  );
  assert.match(
    refused(await api.call('bundle.export', { plan: null, outcomeId, origin: 'x', path: join(work, 'again.zip') }), 'HELD_GONE'),
    /then export the bundle\.$/,
  );
  assert.match(refused(await api.call('memory.export', { format: 'trace', path, timelineId: outcomeId }), 'HELD_GONE'), /run it again/);
  assert.match(
    refused(await api.call('memory.export', { format: 'trace', path, timelineId: 'timeline-00000000-0000-4000-8000-000000000000' }), 'HELD_GONE'),
    /this memory timeline .*: open its file again, then export\.$/,
  );
  // The run opened again in this session, its report from the last one: the report is what is missing, in words.
  const reopened = answered<{ outcomeId: string }>(await api.call('run.open', { path: RESULT }));
  assert.match(
    refused(
      await api.call('bundle.export', { plan: null, outcomeId: reopened.outcomeId, origin: 'x', sanitizerId: reportId, path: join(work, 'again.zip') }),
      'HELD_GONE',
    ),
    /^The workbench no longer holds this sanitizer report \(.*\): run the sanitizer again \(or open its report again\), then export the bundle\.$/,
  );
  assert.equal(existsSync(path) || existsSync(join(work, 'again.zip')), false);
  // A monitoring session's samples are sent unasked (the run took none of its own): one no longer held is left out.
  const withoutSamples = join(work, 'without-samples.zip');
  answered(
    await api.call('bundle.export', {
      plan: null,
      outcomeId: reopened.outcomeId,
      origin: 'x',
      samplesId: 'monitor:m-00000000-0000-4000-8000-000000000000',
      path: withoutSamples,
    }),
  );
  assert.equal(existsSync(withoutSamples), true, 'exported, without the samples');
});
