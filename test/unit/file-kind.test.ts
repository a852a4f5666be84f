import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { MAX_RECENT_FILES, withRecentFile, workspaceSettingsSchema } from '../../core/api/workspace';
import { SNIFF_HEAD_BYTES, sniffFileKind, topLevelKeys } from '../../core/workspace/file-kind';

const root = process.cwd();
const head = (path: string) => new Uint8Array(readFileSync(join(root, path)).subarray(0, SNIFF_HEAD_BYTES));
const text = (s: string) => new TextEncoder().encode(s);

test('every saved run result in the fixtures is a result, by content (the name says only .json)', () => {
  for (const name of readdirSync(join(root, 'test/fixtures/runs')).filter((n) => n.endsWith('.json')))
    assert.equal(sniffFileKind(head(`test/fixtures/runs/${name}`), name), 'result', name);
});

test('plans, diagnosis reports, snapshots, bundles, sanitizer output and sources go to their places', () => {
  assert.equal(sniffFileKind(head('samples/allocation-too-large/plan.json'), 'plan.json'), 'plan');
  assert.equal(sniffFileKind(head('samples/allocation-too-large/kernel.cu'), 'kernel.cu'), 'source');
  assert.equal(sniffFileKind(head('test/fixtures/diagnoses/ctypes-leak.json'), 'ctypes-leak.json'), 'diagnosis');
  assert.equal(sniffFileKind(head('test/fixtures/pickles/snapshot-p4.pickle'), 'x.pickle'), 'snapshot');
  assert.equal(sniffFileKind(head('test/fixtures/bundles/never-frees.zip'), 'b.zip'), 'bundle');
  assert.equal(sniffFileKind(head('test/fixtures/sanitizer/memcheck-oob.txt'), 'memcheck-oob.txt'), 'sanitizer-text');
  const xml = readdirSync(join(root, 'test/fixtures/sanitizer/h100')).find((n) => n.endsWith('.xml'))!;
  assert.equal(sniffFileKind(head(`test/fixtures/sanitizer/h100/${xml}`), xml), 'sanitizer-xml');
});

test('a kernel profile is told by its kind, even when its per-line counters run past the head', () => {
  for (const name of ['profile-broken.json', 'profile-fixed.json', 'profile-no-counters.json'])
    assert.equal(sniffFileKind(head(`test/fixtures/ncu/${name}`), name), 'profile', name);
  const lines = Array.from({ length: 5000 }, (_, i) => `{"line":${i + 1},"samples":0}`).join(',');
  const long = `{"kind": "gpu-workbench-profile", "version": 1, "kernel": {"entry": "k"}, "counters": {"lines": [${lines}]}, "noCounters": null}`;
  assert.ok(long.length > SNIFF_HEAD_BYTES);
  assert.equal(sniffFileKind(text(long).subarray(0, SNIFF_HEAD_BYTES), 'p.json'), 'profile');
  // Another kind of object with the same keys is not one.
  assert.equal(sniffFileKind(text('{"kind": "something-else", "kernel": {}}'), 'x.json'), 'json');
});

test('the name does not decide: a result named .cu is a result, a zip named .json a bundle, a pickle named .txt a snapshot', () => {
  assert.equal(sniffFileKind(head('test/fixtures/runs/trap.json'), 'trap.cu'), 'result');
  assert.equal(sniffFileKind(head('test/fixtures/bundles/never-frees.zip'), 'b.json'), 'bundle');
  assert.equal(sniffFileKind(head('test/fixtures/pickles/snapshot-p2.pickle'), 'notes.txt'), 'snapshot');
});

test('Chrome traces, as an object or a bare list of events; other JSON is JSON; NUL bytes are binary', () => {
  assert.equal(sniffFileKind(text('{"displayTimeUnit":"ns","traceEvents":[{"ph":"X"}]}'), 't.json'), 'trace');
  assert.equal(sniffFileKind(text('[ {"name":"alloc","ph":"C","ts":1,"pid":1} ]'), 't.json'), 'trace');
  assert.equal(sniffFileKind(text('{"a": 1}'), 'x.json'), 'json');
  assert.equal(sniffFileKind(text('[1,2,3]'), 'x.json'), 'json');
  assert.equal(sniffFileKind(text('{"a": 1}'), 'x.cu'), 'source', 'braces in a .cu are source');
  assert.equal(sniffFileKind(new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 1]), 'a.out'), 'binary');
  assert.equal(sniffFileKind(new Uint8Array(), 'empty.cu'), 'source');
  assert.equal(sniffFileKind(text('<?xml version="1.0"?><svg/>'), 'x.xml'), 'source', 'XML that is not a sanitizer report');
});

test('only the top-level keys are read, from a head that may end anywhere', () => {
  assert.deepEqual(topLevelKeys('{"a": {"b": 1, "c": [ {"d": "}"} ]}, "e\\"": "x", "f": 2}'), { keys: ['a', 'e"', 'f'], complete: true });
  assert.deepEqual(topLevelKeys('{"status": "ok", "result": {"steps": [1, 2'), { keys: ['status', 'result'], complete: false });
  assert.equal(topLevelKeys('[1]'), null);
  // A result whose "diagnosis" comes after a huge log is still known by "status" and "compile" in its head.
  const big = `{"status":"ok","compile":[],"result":{"log":"${'x'.repeat(200_000)}"},"diagnosis":{}}`;
  assert.equal(sniffFileKind(text(big).subarray(0, SNIFF_HEAD_BYTES), 'r.json'), 'result');
});

test('recent files are validated on load entry by entry: a bad one is dropped, the rest and the other settings kept', () => {
  const parsed = workspaceSettingsSchema.parse({
    profileId: 'device:0',
    recentFiles: [
      { path: '/w/a.json', kind: 'result' },
      { path: '', kind: 'result' },
      { path: '/w/b.cu', kind: 'nonsense' },
      { path: '/w/a.json', kind: 'source' },
      ...Array.from({ length: 20 }, (_, i) => ({ path: `/w/${i}.cu`, kind: 'source' })),
    ],
  });
  assert.equal(parsed.profileId, 'device:0');
  assert.equal(parsed.recentFiles?.length, MAX_RECENT_FILES);
  assert.deepEqual(parsed.recentFiles?.[0], { path: '/w/a.json', kind: 'result' });
  assert.equal(parsed.recentFiles?.[1]?.path, '/w/0.cu', 'the empty, unknown and repeated entries are gone');
  assert.equal(workspaceSettingsSchema.parse({ profileId: null, recentFiles: 'x' }).recentFiles, undefined);
  const next = withRecentFile(parsed.recentFiles ?? [], { path: '/w/3.cu', kind: 'source' });
  assert.deepEqual([next[0]?.path, next.length, next.filter((r) => r.path === '/w/3.cu').length], ['/w/3.cu', MAX_RECENT_FILES, 1]);
});
