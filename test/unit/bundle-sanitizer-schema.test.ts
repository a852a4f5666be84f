import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { MAX_FOLDED_GROUPS, sanitizeReportSchema } from '../../core/bundle/bundle-sanitizer';
import { arrangeFindings } from '../../core/sanitizer/arrange-findings';
import { groupFindings } from '../../core/sanitizer/group';
import type { FindingGroup } from '../../core/sanitizer/findings';
import { parseSanitizerXml } from '../../core/sanitizer/parse-xml';
import { judgeSanitizeRun, type SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { emptySummary } from '../../core/sanitizer/parse-text';

// sanitizer.json's schema reads what arranging and placing add to a report (followedBy, heldBy, sourceMapped,
// raceSourceMapped, heldAtExit), and refuses or drops what a hostile bundle could put there. Findings from
// compute-sanitizer's XML recorded on an H200.
const ROOT = join(__dirname, '../../..');
const H200 = join(ROOT, 'test/fixtures/programs/h200');
const mapped = {
  file: '/home/me/oob.py',
  line: 21,
  cachePath: '/tmp/tmp9kuab6ub/856f8193deab3878984904ecb40fceb5f1fe63c4.cubin.cu',
  cacheLine: 4,
  how: 'whole-source' as const,
};

function report(): SanitizeReport {
  const found = parseSanitizerXml('memcheck', readFileSync(join(H200, 'cupy-out-of-bounds.memcheck.xml'), 'utf8')).findings;
  const { groups, findings, held } = arrangeFindings(found);
  const summary = { ...emptySummary(), errorsReported: found.length };
  const facts = {
    tool: 'memcheck' as const,
    exitCode: 86,
    signal: null,
    timedOut: null,
    cancelled: false,
    findings,
    groups,
    held,
    summary,
    xmlFiles: 1,
    problems: [],
  };
  return {
    tool: 'memcheck',
    command: ['python3', 'oob.py'],
    cwd: '/home/me',
    sanitizer: { path: 'compute-sanitizer', version: '2025.3.1' },
    ...judgeSanitizeRun(facts),
    exitCode: 86,
    signal: null,
    durationMs: 1,
    findings,
    findingsFrom: 'xml',
    groups: groups.map((g, i) => (i === 0 ? { ...g, sourceMapped: mapped, raceSourceMapped: { first: mapped, second: null } } : g)),
    heldAtExit: held,
    summary,
    xmlFiles: [{ name: 'report-1.xml', bytes: 1 }],
    programOutput: '',
    toolOutput: '',
    outputDroppedBytes: 0,
    problems: [],
  };
}
const roundTrip = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const parse = (v: unknown) => sanitizeReportSchema.safeParse(roundTrip(v));
const withGroup = (r: SanitizeReport, over: Partial<Record<keyof FindingGroup, unknown>>) => ({ ...r, groups: [{ ...r.groups[0]!, ...over }] });

test('a report with folded API errors, a place in the .py and memory held at exit reads back whole', () => {
  const r = report();
  assert.equal(r.groups[0]!.followedBy?.length, 1, 'the launch failure is folded under the read');
  assert.equal(r.heldAtExit?.[0]?.holder, 'cupy-arrays');
  const read = parse(r);
  assert.ok(read.success, read.error?.message);
  assert.deepEqual(read.data, roundTrip(r));
  // A report made before these fields existed still reads.
  const { heldAtExit: _held, ...old } = r;
  assert.ok(parse({ ...old, groups: r.groups.map(({ followedBy: _f, sourceMapped: _s, raceSourceMapped: _r, ...g }) => g) }).success);
});

test('hostile values in the new fields are refused: a holder not known, a line that is no line, a holder twice, too many folded', () => {
  const r = report();
  const refused: [string, unknown][] = [
    ['unknown holder', withGroup(r, { heldBy: 'my-own-allocator' })],
    ['line 0', withGroup(r, { sourceMapped: { ...mapped, line: 0 } })],
    ['fractional line', withGroup(r, { sourceMapped: { ...mapped, cacheLine: 1.5 } })],
    ['huge path', withGroup(r, { sourceMapped: { ...mapped, file: 'x'.repeat(5000) } })],
    ['unknown how', withGroup(r, { raceSourceMapped: { first: { ...mapped, how: 'guessed' }, second: null } })],
    ['followedBy not a list', withGroup(r, { followedBy: { 0: r.groups[0] } })],
    ['too many folded', withGroup(r, { followedBy: Array.from({ length: MAX_FOLDED_GROUPS + 1 }, () => r.groups[0]!.followedBy![0]) })],
    ['a held holder twice', { ...r, heldAtExit: [r.heldAtExit![0], r.heldAtExit![0]] }],
    ['negative held bytes', { ...r, heldAtExit: [{ ...r.heldAtExit![0], bytes: -1 }] }],
    ['held not a list', { ...r, heldAtExit: 'cupy-arrays' }],
  ];
  for (const [what, value] of refused) assert.equal(parse(value).success, false, what);
});

test('folding is one level deep: a follower’s own followers are dropped, never read on without end', () => {
  const r = report();
  const follower = r.groups[0]!.followedBy![0]!;
  let nested: FindingGroup = follower;
  for (let i = 0; i < 50; i++) nested = { ...follower, followedBy: [nested] };
  const read = parse(withGroup(r, { followedBy: [nested] }));
  assert.ok(read.success, read.error?.message);
  assert.equal(read.data.groups[0]!.followedBy!.length, 1);
  assert.equal('followedBy' in read.data.groups[0]!.followedBy![0]!, false);
  // The same for the groups of memory held at exit.
  const held = parse({ ...r, heldAtExit: [{ ...r.heldAtExit![0]!, groups: [{ ...r.heldAtExit![0]!.groups[0]!, followedBy: [follower] }] }] });
  assert.ok(held.success);
  assert.equal('followedBy' in held.data.heldAtExit![0]!.groups[0]!, false);
});

test('a report read from any XML fits the bundle schema the host checks it with: long C++ names, many frames, negative sizes', () => {
  // The reader fuzz's cases (test/integration/reader-fuzz.test.ts): each was read, then refused by the host as "not a sanitizer report".
  const name = `void cutlass::Kernel&lt;${'cutlass::gemm::GemmShape&lt;128, 128, 32&gt;, '.repeat(200)}&gt;(Params)`;
  const frame = `<frame><func>${name}</func><module>/app</module><pc>0x${'1'.repeat(100)}</pc></frame>`;
  const xml =
    '<?xml version="1.0"?>\n<ComputeSanitizerOutput>\n' +
    `<record><kind>Precise</kind><level>Error</level><what><text>Invalid read</text><size>-4</size>` +
    `<address>0x${'f'.repeat(100)}</address></what><where><func>${name}</func><path>/k.cu</path><line>5</line></where>` +
    `<hostStack><saveLocation>kernel launch time</saveLocation>${frame.repeat(1100)}</hostStack></record>\n` +
    `<record><kind>Leak</kind><level>Error</level><what><text>Leaked -8 bytes</text><size>-8</size></what><hostStack>${frame}</hostStack></record>\n` +
    `<record><kind>${'Precise'.repeat(100)}</kind><level>Error</level><what><text>${'x'.repeat(60_000)}</text></what></record>\n` +
    '</ComputeSanitizerOutput>\n';
  const r = parseSanitizerXml('memcheck', xml, { maxElementsPerRecord: 10_000 });
  assert.equal(r.findings.length, 3, r.problems.join('\n'));
  const [read, leak, other] = r.findings;
  assert.ok(read!.where!.func.length <= 4096 && read!.where!.func.endsWith('…'));
  assert.equal(read!.hostStack.length, 1024);
  assert.ok(read!.hostStack.every((f) => f.func!.length <= 4096 && f.pc!.length <= 64));
  assert.equal(read!.access!.size, null, 'a negative size is no size');
  assert.ok(read!.access!.address!.length <= 64);
  assert.equal(leak!.leak!.bytes, 0);
  assert.ok(other!.recordKind.length <= 256);
  const groups = groupFindings(r.findings);
  assert.ok(groups.every((g) => g.key.length <= 8192 && g.leakedBytes >= 0));
  const checked = sanitizeReportSchema.safeParse({ ...report(), groups, findings: groups.length });
  assert.ok(checked.success, checked.success ? '' : JSON.stringify(checked.error.issues[0]));
});
