import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { planMatchesOutcome } from '../../core/plan/recorded-plan';
import type { RunOutcome } from '../../core/runner/run-outcome';
import {
  documentForPlace,
  findingPlaces,
  frameLabel,
  lacksLineInfo,
  placeCandidates,
  placeLabel,
  showsFrame,
  threadsLabel,
  withoutLineInfoAdvice,
} from '../../core/sanitizer/finding-places';
import type { SanitizerTool } from '../../core/sanitizer/findings';
import { describeGroup, groupFindings, LINEINFO_ADVICE } from '../../core/sanitizer/group';
import { parseSanitizerXml } from '../../core/sanitizer/parse-xml';
import { ROOT, SAMPLES } from '../helpers/cli';

// What the findings view and the editor's marks take from a group: its lines, its labels, and which open
// document a path in a report stands for. Groups from compute-sanitizer's own XML, recorded on an H100.
const DIR = join(ROOT, 'test/fixtures/sanitizer/h100');
const groups = (tool: SanitizerTool, name: string) => groupFindings(parseSanitizerXml(tool, readFileSync(join(DIR, name), 'utf8')).findings);
const CASES = '/work/main/test/gpu/programs/sanitizer_cases.cu';

test('memcheck off-by-one: the write is a place at line 12; leaks and the API error name no source line', () => {
  const [oob, ...rest] = groups('memcheck', 'memcheck-oob.xml');
  // The kernel rides with the place: a link finds the open file that defines it.
  assert.deepEqual(findingPlaces(oob!), [{ file: CASES, line: 12, role: 'at', kernel: 'offByOne' }]);
  assert.equal(placeLabel(oob!), 'sanitizer_cases.cu:12');
  assert.equal(threadsLabel(oob!), 'thread (232,0,0) · block (3,0,0)');
  assert.equal(frameLabel(oob!), 'Launched from');
  assert.ok(showsFrame(oob!));
  assert.equal(lacksLineInfo(oob!), false);
  for (const g of rest) {
    assert.deepEqual(findingPlaces(g), [], g.kind);
    assert.equal(threadsLabel(g), null);
    assert.equal(showsFrame(g), false, 'its sentence names the frame already');
  }
  assert.deepEqual(rest.map(placeLabel).sort(), ['cudaDeviceSynchronize', 'leak', 'leak']);
});

test('racecheck: both sides of the hazard are places, the read first; synccheck: 32 threads, one place', () => {
  const [race] = groups('racecheck', 'racecheck-race-report-all.xml');
  assert.deepEqual(
    findingPlaces(race!).map((p) => [p.line, p.role]),
    [
      [19, 'first'],
      [17, 'second'],
    ],
  );
  const [barrier] = groups('synccheck', 'synccheck-sync.xml');
  assert.deepEqual(findingPlaces(barrier!), [{ file: CASES, line: 30, role: 'at', kernel: 'divergentBarrier' }]);
  assert.equal(threadsLabel(barrier!), 'threads (0–62,0,0) · block (0,0,0)');
});

test('without -lineinfo: no place, the kernel and offset as its label, and the advice taken out of the sentence once', () => {
  const [g] = groups('memcheck', 'memcheck-oob-nolineinfo.xml');
  assert.deepEqual(findingPlaces(g!), []);
  assert.ok(lacksLineInfo(g!));
  assert.equal(placeLabel(g!), 'offByOne (pc 0xc0)');
  const sentence = describeGroup(g!);
  assert.ok(sentence.includes(LINEINFO_ADVICE));
  assert.equal(withoutLineInfoAdvice(sentence), 'Invalid write of 4 bytes out of bounds in offByOne (pc 0xc0) — 1 thread (232,0,0) in block (3,0,0).');
});

test('a Python leak leads to its own line (leak.py:24)', () => {
  const [g] = groups('memcheck', 'program-ctypes-leak.xml');
  assert.deepEqual(findingPlaces(g!), [{ file: '/work/main/samples/programs/ctypes-leak/leak.py', line: 24, role: 'frame' }]);
  assert.equal(placeLabel(g!), 'leak.py:24');
});

test('which open document a report path means: the same path, the one pointed out, the run’s own, the only one of that name', () => {
  const docs = [
    { id: 'a', path: '/home/me/src/sanitizer_cases.cu', name: 'sanitizer_cases.cu' },
    { id: 'b', path: '/home/me/samples/trap/broken.cu', name: 'broken.cu' },
    { id: 'c', path: '/home/me/samples/oob/broken.cu', name: 'broken.cu' },
    { id: 'd', path: null, name: 'broken.cu' },
  ];
  const none = { chosen: {}, documents: {}, folders: [] };
  // Another machine's path: the only open file of that name.
  assert.equal(documentForPlace(CASES, docs, none), 'a');
  // The very path, whatever else is open.
  assert.equal(documentForPlace('/home/me/samples/oob/broken.cu', docs, none), 'c');
  // Three files named broken.cu: not told without more.
  assert.equal(documentForPlace('broken.cu', docs, none), null);
  // … the run's own document, the one beside the report, or the one the person pointed out.
  assert.equal(documentForPlace('broken.cu', docs, { ...none, documents: { 'broken.cu': 'd' } }), 'd');
  assert.equal(documentForPlace('/elsewhere/broken.cu', docs, { ...none, folders: ['/home/me/samples/trap'] }), 'b');
  assert.equal(documentForPlace('broken.cu', docs, { ...none, chosen: { 'broken.cu': 'c' } }), 'c');
  // A choice whose document was closed since counts for nothing.
  assert.equal(documentForPlace('broken.cu', docs, { ...none, chosen: { 'broken.cu': 'gone' } }), null);
  assert.equal(documentForPlace('kernel.cu', docs, none), null);
});

test('the paths to try for a file no open document settles: the report’s own path, then beside the report or plan', () => {
  assert.deepEqual(placeCandidates(CASES, ['/home/me/reports', '/home/me/reports']), [CASES, '/home/me/reports/sanitizer_cases.cu']);
  assert.deepEqual(placeCandidates('broken.cu', ['/home/me/samples/oob']), ['/home/me/samples/oob/broken.cu']);
});

const recorded = (name: string) => JSON.parse(readFileSync(join(ROOT, 'test/fixtures/runs', name), 'utf8')) as RunOutcome;
const plan = (path: string): unknown => JSON.parse(readFileSync(join(SAMPLES, path), 'utf8'));

test('a recorded result knows its plan when one is open: the same steps, the same launches', () => {
  assert.ok(planMatchesOutcome(plan('oob-off-by-one/plan.json'), recorded('oob-off-by-one.json')));
  // A run that stopped at its failure recorded fewer steps than its plan has: still its plan.
  assert.ok(planMatchesOutcome(plan('null-pointer/plan.json'), recorded('null-pointer.json')));
  assert.equal(planMatchesOutcome(plan('oob-off-by-one/plan.json'), recorded('null-pointer.json')), false);
  assert.equal(planMatchesOutcome(plan('vector-add/plan.json'), recorded('oob-off-by-one.json')), false);
  // The same plan with another launch is not the one that ran.
  const other = plan('oob-off-by-one/plan.json') as { steps: { op: string; block?: number[] }[] };
  other.steps.find((s) => s.op === 'launch')!.block = [128, 1, 1];
  assert.equal(planMatchesOutcome(other, recorded('oob-off-by-one.json')), false);
  assert.equal(planMatchesOutcome(null, recorded('oob-off-by-one.json')), false);
});
