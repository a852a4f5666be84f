import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import WebSocket from 'ws';

import { ROOT } from '../helpers/cli';
import {
  hugeRecordXml,
  laughsPickle,
  long4Pickle,
  mebibyteEntriesBundle,
  memoStringPickle,
  nestedDiagnosisBundle,
  nestedJson,
  noneFloodPickle,
  numbersDiagnosisBundle,
  numbersJson,
  numbersManifestBundle,
  objectsManifestBundle,
  sharedFilenamePickle,
  sharedStreamBundle,
  tuple1Pickle,
} from '../helpers/hostile-files';
import { clearPeak, MiB, peakRss, runCliMeasured, samplePeaks } from '../helpers/peak-rss';
import { startServe, type ServeProcess } from '../helpers/serve';

// Issue 25's hostile files, each made here at the review's size, opened through the CLI and through a running serve
// host: each is answered with a refusal in words, the host lives on, its peak memory stays under 1.5 GiB and its
// time under 10 s. The readers (child processes with limits of their own) may take more; their peak is printed.
const dir = mkdtempSync(join(tmpdir(), 'wb-hostile-files-'));
const MAX_PEAK = 1.5 * 2 ** 30;
const MAX_MS = 10_000;
const RUN = join(ROOT, 'test/fixtures/runs/oob-off-by-one.json');
const FACTS = join(ROOT, 'test/fixtures/env/h100/doctor-facts.json');
/** `bundle export --preview` of a gallery run with these files: what the CLI reads a result and a sanitizer XML with. */
const exportPreview = (...files: string[]) => ['bundle', 'export', '--sample', 'oob-off-by-one', '--preview', '--no-ptx', '--doctor-facts', FACTS, ...files];

interface Figure {
  what: string;
  path: string;
  fileBytes: number;
  ms: number;
  peak: number;
  readers: number;
}
const figures: Figure[] = [];

let serve: ServeProcess;
let ws: WebSocket;
let nextId = 1;
before(async () => {
  // The hostile files are made in a folder of the test's own: serve's workspace holds it (--root), as a user's would.
  serve = await startServe({ GPU_WORKBENCH_STATE_DIR: join(dir, 'state'), GPU_WORKBENCH_CACHE_DIR: join(dir, 'cache') }, 'npm-script', ['--root', dir]);
  ws = await new Promise<WebSocket>((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${serve.port}/api?token=${serve.token}`, { origin: `http://127.0.0.1:${serve.port}` });
    socket.on('open', () => resolve(socket));
    socket.on('error', reject);
  });
});
after(async () => {
  ws?.close();
  await serve?.stop();
  rmSync(dir, { recursive: true, force: true });
  const mib = (b: number) => (b / MiB).toFixed(0).padStart(6);
  console.log(
    `\n${'case'.padEnd(44)} ${'path'.padEnd(26)} ${'file MB'.padStart(8)} ${'ms'.padStart(6)} ${'host MiB'.padStart(8)} ${'reader MiB'.padStart(10)}`,
  );
  for (const f of figures)
    console.log(
      `${f.what.padEnd(44)} ${f.path.padEnd(26)} ${(f.fileBytes / 1e6).toFixed(1).padStart(8)} ${f.ms.toFixed(0).padStart(6)} ${mib(f.peak).padStart(8)} ${mib(f.readers).padStart(10)}`,
    );
});

type Envelope = { ok: boolean; value?: unknown; error?: { code: string; message: string } };

/** One call over the socket; its events are passed over, its answer returned. */
function call(channel: string, request: unknown): Promise<Envelope> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const onMessage = (data: WebSocket.RawData) => {
      const m = JSON.parse(String(data)) as { id: number; envelope?: Envelope };
      if (m.id !== id || !m.envelope) return;
      ws.off('message', onMessage);
      ws.off('close', onClose);
      resolve(m.envelope);
    };
    const onClose = () => reject(new Error(`the connection closed during ${channel}`));
    ws.on('message', onMessage);
    ws.once('close', onClose);
    ws.send(JSON.stringify({ id, channel, request }));
  });
}

/** The host's answers to `calls` made at once, with the time they took and the host's and its readers' peaks. */
async function measuredCalls(calls: [string, unknown][]): Promise<{ replies: Envelope[]; ms: number; peak: number; readers: number }> {
  const pid = serve.child.pid!;
  clearPeak(pid);
  const stop = samplePeaks(pid);
  const started = performance.now();
  const replies = await Promise.all(calls.map(([channel, request]) => call(channel, request)));
  const ms = performance.now() - started;
  const { host, readers } = stop();
  return { replies, ms, peak: Math.max(host, peakRss(pid) ?? 0), readers };
}

async function hostAnswers(): Promise<void> {
  assert.equal(serve.child.exitCode, null, 'serve exited');
  const info = await call('drafts.list', {});
  assert.equal(info.ok, true, 'serve answers a cheap call afterwards');
}

function withinBounds(what: string, f: Omit<Figure, 'what' | 'path' | 'fileBytes'>): void {
  assert.ok(f.peak > 0, `${what}: no peak was read`);
  assert.ok(f.peak < MAX_PEAK, `${what}: the host's peak was ${(f.peak / MiB).toFixed(0)} MiB`);
  assert.ok(f.ms < MAX_MS, `${what}: it took ${f.ms.toFixed(0)} ms`);
}

interface Attack {
  what: string;
  make: (dir: string) => Promise<string>;
  /** The CLI's arguments for the file, and the exit it must give. */
  cli?: { label: string; args: (file: string) => string[]; exit: number };
  /** The calls serve answers for it. */
  serve: ((file: string) => [string, unknown])[];
  /** The refusal, as the CLI prints it and as serve's error (or, for a sanitizer XML, its problem) says it. */
  refusal: RegExp;
}

const bundleInspect = { label: 'bundle inspect', args: (f: string) => ['bundle', 'inspect', f], exit: 64 };
const memoryCli = { label: 'memory', args: (f: string) => ['memory', f], exit: 64 };
const bundleOpen = (f: string): [string, unknown] => ['bundle.open', { path: f }];
const memoryOpen = (f: string): [string, unknown] => ['memory.open', { path: f }];

const ATTACKS: Attack[] = [
  {
    what: 'manifest of 140 million numbers',
    make: numbersManifestBundle,
    cli: bundleInspect,
    serve: [bundleOpen],
    refusal: /the entry "manifest\.json" is 280000001 bytes, over the limit of 262144 for a bundle manifest/,
  },
  {
    what: 'manifest of 503 MB of {}',
    make: objectsManifestBundle,
    cli: bundleInspect,
    serve: [bundleOpen],
    refusal: /the entry "manifest\.json" is 503000000 bytes, over the limit of 262144 for a bundle manifest/,
  },
  {
    what: '1,000 entries of 1 MiB',
    make: mebibyteEntriesBundle,
    cli: bundleInspect,
    serve: [bundleOpen],
    refusal: /its entries declare more than 402653184 bytes in all/,
  },
  {
    what: '1,000 entries sharing one stream',
    make: sharedStreamBundle,
    cli: bundleInspect,
    serve: [bundleOpen],
    refusal: /the entries "e\/0" and "e\/1" overlap in the zip/,
  },
  {
    what: '210 MB of NONE',
    make: noneFloodPickle,
    cli: memoryCli,
    serve: [memoryOpen],
    refusal: /piles up more than 1,000,000 values at once/,
  },
  {
    what: 'one 1 MiB string referred to 5,000 times',
    make: memoStringPickle,
    cli: memoryCli,
    serve: [memoryOpen],
    refusal: /references to values it already holds would expand it past/,
  },
  { what: 'billion laughs', make: laughsPickle, cli: memoryCli, serve: [memoryOpen], refusal: /references to values it already holds would expand it past 64/ },
  { what: 'LONG4 of 256 KB', make: long4Pickle(256 * 1024), cli: memoryCli, serve: [memoryOpen], refusal: /LONG4 holds an integer of 262,144 bytes/ },
  { what: 'LONG4 of 1 MB', make: long4Pickle(2 ** 20), cli: memoryCli, serve: [memoryOpen], refusal: /LONG4 holds an integer of 1,048,576 bytes/ },
  {
    what: '5,000 frames sharing one 50 MiB filename',
    make: sharedFilenamePickle,
    cli: memoryCli,
    serve: [memoryOpen],
    refusal: /references to values it already holds would expand it past 50\.\d+ GiB/,
  },
  { what: 'TUPLE1 10 million deep', make: tuple1Pickle, cli: memoryCli, serve: [memoryOpen], refusal: /nests deeper than 256 levels/ },
  {
    what: 'one sanitizer record of 300 MB',
    make: hugeRecordXml,
    cli: { label: 'bundle export', args: (f) => [...exportPreview('--result', RUN, '--sanitizer-xml', f), '--json'], exit: 0 },
    serve: [(f) => ['sanitize.open', { xmlPath: f, textPath: null, tool: null }]],
    refusal: /The XML holds more than 65,536 characters without markup inside <text>/,
  },
  {
    what: 'a diagnosis nested 15 Mi deep (30 MiB)',
    make: nestedJson('nested-diagnosis.json'),
    serve: [(f) => ['diagnose.open', { path: f }]],
    refusal: /nests arrays and objects 33 deep at byte 32, over the limit of 32 for a diagnosis report/,
  },
  {
    what: 'a diagnosis of 15 Mi numbers',
    make: numbersJson('numbers-diagnosis.json'),
    serve: [(f) => ['diagnose.open', { path: f }]],
    refusal: /holds more than 2,000,000 values .*over the limit for a diagnosis report/,
  },
  {
    what: 'a bundle whose diagnosis nests 15 Mi deep',
    make: nestedDiagnosisBundle,
    cli: bundleInspect,
    serve: [bundleOpen],
    refusal: /the entry "diagnosis\.json" expands \d+ times \(a zip bomb's ratio/,
  },
  {
    what: 'a bundle whose diagnosis is 15 Mi numbers',
    make: numbersDiagnosisBundle,
    cli: bundleInspect,
    serve: [bundleOpen],
    refusal: /diagnosis\.json holds more than 2,000,000 values .*over the limit for a diagnosis report/,
  },
  {
    what: 'a result nested 15 Mi deep (30 MiB)',
    make: nestedJson('nested-result.json', 'result'),
    cli: { label: 'bundle export', args: (f) => exportPreview('--result', f), exit: 64 },
    serve: [(f) => ['run.open', { path: f }], memoryOpen],
    refusal: /nests arrays and objects 33 deep at byte 41, over the limit of 32 for a run result/,
  },
  {
    what: 'a result of 15 Mi numbers',
    make: numbersJson('numbers-result.json', 'result'),
    cli: { label: 'bundle export', args: (f) => exportPreview('--result', f), exit: 64 },
    serve: [(f) => ['run.open', { path: f }], memoryOpen],
    refusal: /holds more than 4,000,000 values .*over the limit for a run result/,
  },
];

/** What serve's answer says: an error's message, or (a sanitizer XML read with a problem) the report's problems. */
function refusalOf(reply: Envelope): string {
  if (!reply.ok) return reply.error!.message;
  const problems = (reply.value as { problems?: unknown } | null)?.problems;
  return Array.isArray(problems) ? problems.join(' ') : '';
}

for (const attack of ATTACKS) {
  test(`${attack.what}: refused in words by the CLI and by serve, each under 1.5 GiB and 10 s`, { timeout: 180_000 }, async () => {
    const file = await attack.make(dir);
    const fileBytes = statSync(file).size;
    try {
      if (attack.cli) {
        const r = await runCliMeasured(attack.cli.args(file), dir);
        figures.push({ what: attack.what, path: `CLI ${attack.cli.label}`, fileBytes, ...pick(r) });
        assert.equal(r.code, attack.cli.exit, `${attack.what}: exit ${r.code}\n${r.stderr}`);
        assert.match(r.stderr + r.stdout, attack.refusal, attack.what);
        withinBounds(`${attack.what} (CLI)`, pick(r));
      }
      for (const request of attack.serve) {
        const [channel, body] = request(file);
        const m = await measuredCalls([[channel, body]]);
        figures.push({ what: attack.what, path: `serve ${channel}`, fileBytes, ms: m.ms, peak: m.peak, readers: m.readers });
        const said = refusalOf(m.replies[0]!);
        assert.match(said, attack.refusal, `${attack.what} (${channel}): ${JSON.stringify(m.replies[0]).slice(0, 400)}`);
        withinBounds(`${attack.what} (${channel})`, m);
        await hostAnswers();
      }
    } finally {
      rmSync(file, { force: true });
    }
  });
}

const pick = (r: { ms: number; peak: number; readersPeak: number }) => ({ ms: r.ms, peak: r.peak, readers: r.readersPeak });

test(
  'four opens at once of the amplifying bundles: each refused, serve under 1.5 GiB and 10 s, and four CLIs at once likewise',
  { timeout: 120_000 },
  async () => {
    const files = [await mebibyteEntriesBundle(dir), await sharedStreamBundle(dir)];
    const four = [files[0]!, files[1]!, files[0]!, files[1]!];
    const fileBytes = four.reduce((n, f) => n + statSync(f).size, 0);
    const m = await measuredCalls(four.map(bundleOpen));
    figures.push({ what: 'four amplifying bundles at once', path: 'serve bundle.open ×4', fileBytes, ms: m.ms, peak: m.peak, readers: m.readers });
    for (const reply of m.replies) assert.match(refusalOf(reply), /declare more than 402653184 bytes in all|overlap in the zip/);
    withinBounds('four bundle.open at once', m);
    await hostAnswers();

    const started = performance.now();
    const runs = await Promise.all(four.map((f) => runCliMeasured(['bundle', 'inspect', f], dir)));
    const ms = performance.now() - started;
    const peak = Math.max(...runs.map((r) => r.peak));
    figures.push({
      what: 'four amplifying bundles at once',
      path: 'CLI bundle inspect ×4',
      fileBytes,
      ms,
      peak,
      readers: Math.max(...runs.map((r) => r.readersPeak)),
    });
    for (const r of runs) {
      assert.equal(r.code, 64, r.stderr);
      assert.match(r.stderr, /declare more than 402653184 bytes in all|overlap in the zip/);
      withinBounds('bundle inspect, four at once', pick(r));
    }
  },
);
