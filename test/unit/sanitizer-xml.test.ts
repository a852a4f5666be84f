import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';

import type { SanitizerFinding, SanitizerTool } from '../../core/sanitizer/findings';
import { createSanitizerXmlParser, parseSanitizerXml } from '../../core/sanitizer/parse-xml';
import { ROOT } from '../helpers/cli';

/** compute-sanitizer 2025.3.1 on an H100: test/fixtures/sanitizer/h100/README.md says how each was recorded. */
const DIR = join(ROOT, 'test/fixtures/sanitizer/h100');
const fixture = (name: string) => readFileSync(join(DIR, name), 'utf8');
const parse = (tool: SanitizerTool, name: string) => {
  const r = parseSanitizerXml(tool, fixture(name));
  assert.deepEqual(r.problems, [], `${name}: ${r.problems.join(' ')}`);
  assert.ok(r.complete, name);
  return r.findings;
};
const only = <T>(xs: T[]): T => {
  assert.equal(xs.length, 1);
  return xs[0]!;
};
const file = (f: SanitizerFinding) => (f.where?.path ? basename(f.where.path) : null);

test('every recorded XML reads to its end with no problem; the empty ones (<ComputeSanitizerOutput/>) hold nothing', () => {
  const names = readdirSync(DIR).filter((f) => f.endsWith('.xml'));
  assert.ok(names.length >= 40);
  for (const name of names) {
    const tool = (['memcheck', 'racecheck', 'initcheck', 'synccheck'] as const).find((t) => name.startsWith(t)) ?? 'memcheck';
    const r = parseSanitizerXml(tool, fixture(name));
    assert.deepEqual(r.problems, [], name);
    assert.equal(r.complete, true, name);
    assert.equal(r.records, r.findings.length, name);
    if (fixture(name).includes('<ComputeSanitizerOutput/>')) assert.equal(r.findings.length, 0, name);
  }
});

test('memcheck off-by-one: the write, the API error it leaves behind, and the two leaks', () => {
  const [write, api, leak1, leak2, ...rest] = parse('memcheck', 'memcheck-oob.xml');
  assert.equal(rest.length, 0);
  assert.ok(write && api && leak1 && leak2);

  assert.equal(write.tool, 'memcheck');
  assert.equal(write.kind, 'memory-access');
  assert.equal(write.recordKind, 'Precise');
  assert.equal(write.severity, 'error');
  assert.equal(write.text, 'Invalid __global__ write of size 4 bytes is out of bounds');
  assert.equal(write.where?.func, 'offByOne');
  assert.equal(file(write), 'sanitizer_cases.cu');
  assert.equal(write.where?.line, 12);
  assert.equal(write.where?.pc, '0xc0');
  assert.deepEqual(write.thread, { x: 232, y: 0, z: 0 });
  assert.deepEqual(write.block, { x: 3, y: 0, z: 0 });
  assert.deepEqual(write.access, { direction: 'write', space: '__global__', size: 4, address: '0x7fd120800fa0', error: 'out of bounds' });
  assert.equal(write.nearest, null, 'the XML has no nearest allocation: only the text does');
  assert.equal(write.hostStackAt, 'kernel launch time');
  assert.equal(write.hostStack.length, 10);
  assert.deepEqual(write.hostStack[0], { func: 'cuLaunchKernel', module: '/usr/local/nvidia/lib64/libcuda.so.1', pc: '0x39fb94', file: null, line: null });
  assert.deepEqual(write.hostStack[7], { func: null, module: '/lib/x86_64-linux-gnu/libc.so.6', pc: '0x2a1c9', file: null, line: null });

  assert.equal(api.kind, 'api-error');
  assert.equal(api.severity, 'error');
  assert.deepEqual(api.api, { call: 'cudaDeviceSynchronize', error: 'cudaErrorLaunchFailure', code: 719, message: 'unspecified launch failure' });
  assert.match(api.text, /due to "unspecified launch failure"/, '&quot; is decoded');
  assert.equal(api.hostStackAt, 'error');
  assert.equal(api.where, null);

  assert.equal(leak1.kind, 'leak');
  assert.deepEqual(leak1.leak, { bytes: 4000, address: '0x7fd120800000' });
  assert.deepEqual(leak2.leak, { bytes: 4000, address: '0x7fd120801000' });
  assert.equal(leak1.hostStackAt, 'allocation time');
  assert.equal(leak1.hostStack[4]?.func, 'cudaError cudaMalloc<float>', '&lt;float&gt; is decoded');
});

test('memcheck through a null pointer: 32 threads of block 0 write 0x0, 0x4, … 0x7c', () => {
  const findings = parse('memcheck', 'memcheck-null.xml');
  assert.equal(findings.length, 35);
  const writes = findings.filter((f) => f.kind === 'memory-access');
  assert.equal(writes.length, 32);
  writes.forEach((f, i) => {
    assert.deepEqual(f.thread, { x: i, y: 0, z: 0 });
    assert.deepEqual(f.block, { x: 0, y: 0, z: 0 });
    assert.equal(f.access?.address, `0x${(i * 4).toString(16)}`);
    assert.equal(f.where?.func, 'writeThrough');
    assert.equal(f.where?.line, 25);
  });
  assert.deepEqual(
    findings.slice(32).map((f) => f.kind),
    ['api-error', 'leak', 'leak'],
  );
});

test('memcheck with --print-limit 10 of 65,537: the 10 records it wrote, all from block 8', () => {
  const findings = parse('memcheck', 'memcheck-many-limit10.xml');
  assert.equal(findings.length, 10);
  assert.deepEqual(
    findings.map((f) => f.thread?.x),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  assert.ok(findings.every((f) => f.block?.x === 8));
});

test('memcheck without -lineinfo: the kernel and pc, no path and no line', () => {
  const write = parse('memcheck', 'memcheck-oob-nolineinfo.xml')[0]!;
  assert.deepEqual(write.where, { func: 'offByOne', path: null, line: null, pc: '0xc0' });
  assert.deepEqual(write.thread, { x: 232, y: 0, z: 0 });
  assert.equal(write.access?.address, '0x7f67d8800fa0');
});

test('memcheck --leak-check full: three leaks with their sizes', () => {
  const leaks = parse('memcheck', 'memcheck-leak.xml');
  assert.deepEqual(
    leaks.map((f) => [f.kind, f.leak?.bytes]),
    [
      ['leak', 4000],
      ['leak', 4000],
      ['leak', 12345],
    ],
  );
});

test('a Python (ctypes) leak: the host stack ends in a Python frame with a file and line, no module or pc', () => {
  const leak = only(parse('memcheck', 'program-ctypes-leak.xml'));
  assert.deepEqual(leak.leak, { bytes: 1_048_576, address: '0x7efcf0800000' });
  assert.equal(leak.hostStack.length, 4);
  assert.deepEqual(leak.hostStack[0], { func: null, module: '/usr/local/cuda/lib64/libcudart.so.13.0.96', pc: '0x41b5d', file: null, line: null });
  assert.deepEqual(leak.hostStack[3], { func: '<module>', module: null, pc: null, file: '/work/main/samples/programs/ctypes-leak/leak.py', line: 24 });
});

test('racecheck (default): one Analysis record sums 512 hazards between line 19 (read) and line 17 (write)', () => {
  const race = only(parse('racecheck', 'racecheck-race.xml'));
  assert.equal(race.kind, 'race');
  assert.equal(race.recordKind, 'Analysis');
  assert.equal(race.severity, 'error');
  assert.equal(race.text, 'Race condition');
  assert.equal(race.race?.hazards, 512);
  assert.equal(race.race?.type, 'WAR', 'read then write');
  assert.equal(race.race?.first.access, 'Read');
  assert.deepEqual(race.race?.first.where, { func: 'reduceWithoutSync', path: '/work/main/test/gpu/programs/sanitizer_cases.cu', line: 19, pc: '0xc0' });
  assert.equal(race.race?.second.access, 'Write');
  assert.equal(race.race?.second.where?.line, 17);
  assert.equal(race.race?.second.where?.pc, '0xe0');
  assert.equal(race.race?.first.thread, null, 'an Analysis record names no thread');
  assert.equal(race.where?.line, 19);
  assert.deepEqual(race.hostStack, [], 'and has no host stack');
});

test('racecheck --racecheck-report all: Hazard records with both threads, the shared address and the block', () => {
  const hazards = parse('racecheck', 'racecheck-race-report-all.xml');
  assert.equal(hazards.length, 100);
  const h = hazards[0]!;
  assert.equal(h.recordKind, 'Hazard');
  assert.equal(h.kind, 'race');
  assert.equal(h.severity, 'error', 'Hazard records carry no <level>: the text calls them errors');
  assert.equal(h.text, 'Potential WAR hazard detected');
  assert.equal(h.race?.type, 'WAR');
  assert.equal(h.race?.address, '0x680');
  assert.equal(h.race?.hazards, 1);
  assert.deepEqual(h.race?.first.thread, { x: 32, y: 0, z: 0 });
  assert.equal(h.race?.first.access, 'Read');
  assert.equal(h.race?.first.where?.line, 19);
  assert.deepEqual(h.race?.second.thread, { x: 160, y: 0, z: 0 });
  assert.equal(h.race?.second.access, 'Write');
  assert.equal(h.race?.second.where?.line, 17);
  assert.deepEqual(h.thread, { x: 32, y: 0, z: 0 });
  assert.deepEqual(h.block, { x: 0, y: 0, z: 0 });
  assert.equal(h.hostStack.length, 10);
  assert.equal(hazards[99]!.race?.address, '0x6e3');
  assert.deepEqual(hazards[99]!.race?.first.thread, { x: 56, y: 0, z: 0 });
});

test('racecheck on the gallery sample: a write at line 7 then a read at line 8 is a RAW race of 4,194,304 hazards', () => {
  const race = only(parse('racecheck', 'gallery-shared-memory-race-broken-2131.xml'));
  assert.equal(race.race?.type, 'RAW');
  assert.equal(race.race?.hazards, 4_194_304);
  assert.equal(race.race?.first.where?.line, 7);
  assert.equal(race.race?.second.where?.line, 8);
  assert.equal(file(race), 'broken.cu');
});

test('initcheck: 32 uninitialised 4-byte reads of global memory at line 23', () => {
  const reads = parse('initcheck', 'initcheck-uninit.xml');
  assert.equal(reads.length, 32);
  const r = reads[0]!;
  assert.equal(r.kind, 'uninitialised-read');
  assert.equal(r.recordKind, 'Initcheck');
  assert.equal(r.severity, 'error');
  assert.equal(r.where?.func, 'readUninitialised');
  assert.equal(r.where?.line, 23);
  assert.deepEqual(r.access, { direction: 'read', space: '__global__', size: 4, address: '0x7f515e800000', error: null });
  assert.deepEqual(reads[31]!.thread, { x: 31, y: 0, z: 0 });
});

test("synccheck: 32 barrier errors at line 30 with the tool's detail", () => {
  const errors = parse('synccheck', 'synccheck-sync.xml');
  assert.equal(errors.length, 32);
  const e = errors[0]!;
  assert.equal(e.kind, 'barrier');
  assert.equal(e.recordKind, 'Synccheck');
  assert.equal(e.text, 'Barrier error');
  assert.equal(e.detail, 'Divergent thread(s) in warp');
  assert.equal(e.where?.func, 'divergentBarrier');
  assert.equal(e.where?.line, 30);
  assert.deepEqual(
    errors.map((f) => f.thread?.x),
    Array.from({ length: 32 }, (_, i) => 2 * i),
    'half of each warp skips the barrier: the even threads are reported',
  );
});

test('a record kind the parser does not know is kept as kind other, with its text and level', () => {
  const xml = `<?xml version="1.0"?><ComputeSanitizerOutput><record><kind>Imaginary</kind><level>Warning</level>
    <what><text>Something new</text><extra>42</extra></what><where><func>k</func><path>/a/b.cu</path><line>3</line></where></record>
    <record><kind>Bare</kind><what><detail>no text element</detail></what></record></ComputeSanitizerOutput>`;
  const r = parseSanitizerXml('memcheck', xml);
  assert.deepEqual(r.problems, []);
  const [a, b] = r.findings;
  assert.equal(a?.kind, 'other');
  assert.equal(a?.recordKind, 'Imaginary');
  assert.equal(a?.severity, 'warning');
  assert.equal(a?.text, 'Something new');
  assert.equal(a?.where?.line, 3);
  assert.equal(b?.kind, 'other');
  assert.equal(b?.text, 'no text element');
});

test('streaming: any chunking reads the same findings as the whole text', () => {
  for (const name of ['memcheck-null.xml', 'racecheck-race-report-all.xml', 'program-ctypes-leak.xml']) {
    const text = fixture(name);
    const whole = parseSanitizerXml('memcheck', text);
    for (const size of [1, 7, 1000, 65_537]) {
      const p = createSanitizerXmlParser('memcheck');
      for (let i = 0; i < text.length; i += size) p.write(text.slice(i, i + size));
      const r = p.close();
      assert.deepEqual(r.problems, [], `${name} in chunks of ${size}`);
      assert.deepEqual(r.findings, whole.findings, `${name} in chunks of ${size}`);
    }
  }
});
