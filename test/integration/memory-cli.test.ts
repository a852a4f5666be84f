import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { buildSnapshotModel } from '../../core/memory/snapshot-model';
import { unpickle } from '../../core/memory/unpickle';
import { readOomPicture, startOomSnapshotReader } from '../../main/diagnose/oom-history';
import { importSnapshot, SnapshotImportError, startSnapshotReader } from '../../main/memory/snapshot-client';
import { TraceTooLargeError, writeChromeTrace } from '../../main/memory/write-trace';
import { validateChromeTrace } from '../helpers/chrome-trace';
import { parseJson, ROOT, runCli } from '../helpers/cli';

const H100 = join(ROOT, 'test/fixtures/snapshots/h100');
const PICKLES = join(ROOT, 'test/fixtures/pickles');
const dir = mkdtempSync(join(tmpdir(), 'gpu-workbench-memory-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const MiB = 1024 ** 2;

interface Group {
  frame: { filename: string; line: number; name: string } | null;
  count: number;
  bytes: number;
}
interface MemoryJson {
  devices: {
    device: number;
    peak: { bytes: number; timeUs: number; allocations: number; groups: Group[]; largest: { size: number }[] };
    ooms: { request: number; deviceFree: number; allocated: number; reserved: number; holders: Group[] }[];
    atEnd: { count: number; allocations: { size: number }[]; groups: Group[] };
    beforeRecording: { count: number; bytes: number };
  }[];
  trace: { path: string; bytes: number; events: number } | null;
}

test('memory oom.pickle: the peak, the OOM with the request against free, the holders; a Perfetto trace that validates', async () => {
  const tracePath = join(dir, 'oom-trace.json');
  const r = await runCli(['memory', join(H100, 'oom.pickle'), '--json', '--trace', tracePath]);
  assert.equal(r.code, 0, r.stderr);
  const out = parseJson<MemoryJson>(r);
  const [d] = out.devices;
  assert.equal(d!.peak.bytes, 512 * MiB);
  assert.equal(d!.peak.timeUs, 1_795_445_706_394_417);
  assert.equal(d!.peak.largest.length, 8);
  assert.deepEqual(d!.peak.groups[0]!.frame, { filename: '<stdin>', line: 4, name: '<module>' });
  assert.equal(d!.ooms.length, 1);
  assert.equal(d!.ooms[0]!.request, 10 * 1024 ** 4);
  assert.equal(d!.ooms[0]!.deviceFree, 84_196_655_104);
  assert.equal(d!.ooms[0]!.allocated, 256 * MiB);
  assert.equal(d!.ooms[0]!.holders[0]!.count, 4);
  assert.equal(d!.atEnd.count, 4);

  const events = validateChromeTrace(readFileSync(tracePath, 'utf8'));
  for (const ph of ['M', 'C', 'X', 'i']) assert.ok(events.get(ph)?.length, `phase ${ph} present`);
  assert.equal(events.get('X')!.length, 8);
  assert.match(events.get('i')![0]!.name, /OOM/);
  assert.equal(
    out.trace!.events,
    [...events.values()].reduce((s, l) => s + l.length, 0),
  );
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file left',
  );
});

test('memory leak.pickle (text): 50 allocations of 4 MiB alive at the end from <stdin>:16, and what predates the recording', async () => {
  const r = await runCli(['memory', join(H100, 'leak.pickle')]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Peak: 456 MiB allocated \(456 MiB reserved\)/);
  assert.match(r.stdout, /Alive at the end \(leak candidates\): 50 allocations made during the recording, 200 MiB/);
  assert.match(r.stdout, /200 MiB\s+50 × up to 4 MiB\s+<stdin>:16 <module>/);
  assert.match(r.stdout, /allocated before the recording began: 4 blocks, 256 MiB/);
  const json = parseJson<MemoryJson>(await runCli(['memory', join(H100, 'leak.pickle'), '--json']));
  assert.equal(json.devices[0]!.atEnd.count, 50);
  assert.equal(
    json.devices[0]!.atEnd.allocations.reduce((s, a) => s + a.size, 0),
    200 * MiB,
  );
  assert.deepEqual(json.devices[0]!.atEnd.groups[0]!.frame, { filename: '<stdin>', line: 16, name: '<module>' });
});

test('memory on the OOM text: 10 TiB asked for with 78.41 GiB free, PyTorch holding 256 MiB', async () => {
  const r = await runCli(['memory', join(H100, 'oom.pickle')]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Peak: 512 MiB allocated .* at \+0\.563 ms \(entry 16\), 8 allocations alive/);
  assert.match(
    r.stdout,
    /OOM at \+47\.862 ms: asked for 10 TiB with 78\.41 GiB free on the device \(131× what was free\); PyTorch held 256 MiB allocated, 256 MiB reserved \(0 B cached and unused\)/,
  );
});

test('hostile pickles are refused through the CLI with a clear message, exit 64, and nothing in them runs', async () => {
  const marker = '/tmp/gpu-workbench-pwned';
  const cases: [string, RegExp][] = [
    ['evil-reduce.pickle', /refused: The pickle asks to run code \((STACK_)?GLOBAL\).*nothing was run/],
    ['evil-global.pickle', /refused: The pickle asks to run code \(GLOBAL\)/],
    ['deep.pickle', /nests deeper than 256 levels/],
    ['length-past-end.pickle', /ends early/],
    ['truncated.pickle', /ends early|ends inside/],
    ['protocol-6.pickle', /protocol 6 is not supported \(2 to 5 are\)/],
  ];
  for (const [name, message] of cases) {
    const r = await runCli(['memory', join(PICKLES, name), '--trace', join(dir, `${name}.json`)]);
    assert.equal(r.code, 64, `${name}: ${r.stderr}`);
    assert.match(r.stderr, message, name);
    assert.doesNotMatch(r.stderr, /at .*\.js:\d+/, `${name}: no stack trace`);
    assert.equal(existsSync(join(dir, `${name}.json`)), false, `${name}: no trace written`);
  }
  assert.equal(existsSync(marker), false);
});

test('what is not a snapshot file is refused: a device, a missing file, a pickle of something else', async () => {
  let r = await runCli(['memory', '/dev/zero']);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /not a regular file/);
  r = await runCli(['memory', join(dir, 'missing.pickle')]);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /cannot be read \(ENOENT\)/);
  const list = join(dir, 'list.pickle');
  writeFileSync(list, Buffer.from([0x80, 0x04, 0x5d, 0x2e])); // pickle.dumps([], protocol=4)
  r = await runCli(['memory', list]);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /not a PyTorch memory snapshot/);
});

test('a trace past the size limit is refused with the reason, and no file is left behind', async () => {
  const model = buildSnapshotModel(unpickle(new Uint8Array(readFileSync(join(H100, 'leak.pickle')))));
  const target = join(dir, 'too-big.json');
  await assert.rejects(writeChromeTrace(model, target, { maxBytes: 4096 }), (e: unknown) => e instanceof TraceTooLargeError && /Perfetto/.test(e.message));
  await assert.rejects(writeChromeTrace(model, target, { maxBytes: 15_000 }), TraceTooLargeError, 'stopped while streaming, past the estimate');
  assert.equal(existsSync(target), false);
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.includes('too-big')),
    [],
  );
});

test('a snapshot reader started before its file exists reads the file written meanwhile, as an import after it does', async () => {
  const folder = mkdtempSync(join(dir, 'waiting-'));
  const path = join(folder, 'later.pickle');
  const reader = startSnapshotReader(path);
  await new Promise((r) => setTimeout(r, 300)); // the program runs, then writes its snapshot
  copyFileSync(join(H100, 'oom.pickle'), path);
  const early = await importSnapshot(path, { reader });
  const after = await importSnapshot(path);
  assert.deepEqual(early.model, after.model);
  assert.equal(early.model.devices[0]!.count, 29);
  await assert.rejects(reader.read(), /reads once/);
});

test("the allocator-history step's early reader: the OOM's picture when the snapshot came, the shim's reason when none did", async () => {
  const folder = mkdtempSync(join(dir, 'oom-early-'));
  const changes = { GPU_WORKBENCH_SNAPSHOT: join(folder, 'oom-snapshot.pickle'), GPU_WORKBENCH_SHIM_NOTES: join(folder, 'shim-notes.jsonl') };
  const none = await readOomPicture(folder, changes, startOomSnapshotReader(folder, changes));
  assert.equal(none.snapshotPath, null);
  assert.match(none.missing ?? '', /did not import torch/);
  const reader = startOomSnapshotReader(folder, changes);
  copyFileSync(join(H100, 'oom.pickle'), changes.GPU_WORKBENCH_SNAPSHOT);
  const picture = await readOomPicture(folder, changes, reader);
  assert.deepEqual(picture, await readOomPicture(folder, changes));
  assert.equal(picture.snapshotPath, changes.GPU_WORKBENCH_SNAPSHOT);
});

test('the worker hands back typed columns; a cancelled import stops; a refusal is typed', async () => {
  const { model, timings } = await importSnapshot(join(H100, 'oom.pickle'));
  const t = model.devices[0]!;
  assert.ok(t.time instanceof Float64Array && t.stack instanceof Int32Array && t.action instanceof Uint8Array);
  assert.equal(t.count, 29);
  assert.equal(t.deviceFree.get(28), 84_196_655_104);
  assert.equal(timings.bytes, 9105);
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(importSnapshot(join(H100, 'oom.pickle'), { signal: controller.signal }), /cancelled/);
  await assert.rejects(importSnapshot(join(PICKLES, 'evil-reduce.pickle')), (e: unknown) => e instanceof SnapshotImportError && e.kind === 'refused');
  await assert.rejects(
    importSnapshot(join(H100, 'oom.pickle'), { maxBytes: 1000 }),
    (e: unknown) => e instanceof SnapshotImportError && e.kind === 'too-large',
  );
});
