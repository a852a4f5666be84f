import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { renderRun } from '../../main/cli/render-run';
import type { RunOutcome } from '../../main/services/run-service';
import { ROOT } from '../helpers/cli';

// Outcomes of the checks that run beside every plan (poison scan, poison probe, determinism), recorded on an
// H100 by test/gpu/run.test.ts, rendered here as the CLI shows them: what a person reads, without a GPU.
const recorded = (name: string) => JSON.parse(readFileSync(join(ROOT, 'test/fixtures/checks', `${name}.json`), 'utf8')) as RunOutcome;

test('recorded: a kernel reading a buffer nobody wrote is named, with the poison it found', () => {
  const text = renderRun(recorded('uninitialised-no-expectation'));
  assert.match(text, /accumulate read memory nothing had written: out holds 4096 NaN from the poison pattern, the first at index 0/);
});

test('recorded: elements no thread wrote are counted, with the first index', () => {
  const outcome = recorded('unwritten-elements');
  assert.equal(outcome.diagnosis.kind, 'uninitialised-read');
  assert.match(renderRun(outcome), /c holds memory nothing had written: 488 of 1000 elements, the first at index 512/);
});

test('recorded: NaN the kernel computed itself is not blamed on unwritten memory, and the verdict names the checks that ran', () => {
  const outcome = recorded('legit-nan');
  assert.equal(outcome.diagnosis.kind, 'ok');
  const text = renderRun(outcome);
  assert.match(text, /no read-back holding unwritten memory, a second run gave bit-identical results/);
  assert.doesNotMatch(text, /nothing had written/);
});

test('recorded: floating-point atomics that change the last bits are a warning about expected nondeterminism, with both values', () => {
  const outcome = recorded('float-atomics');
  assert.equal(outcome.diagnosis.kind, 'nondeterministic');
  assert.match(renderRun(outcome), /Results differ between two identical runs: 1 of 1 elements of total, the first at index 0 \(523993024, then 523999680\)/);
});
