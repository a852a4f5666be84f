import assert from 'node:assert/strict';
import { test } from 'node:test';

import { classifyExit, runnerRequestSchema, type ExitFacts } from '../../core/runner/protocol';

const facts = (f: Partial<ExitFacts>): ExitFacts => ({
  code: null,
  signal: null,
  watchdogMs: null,
  stickyError: null,
  requested: false,
  beforeReady: false,
  ...f,
});

test('every way a runner can end is classified and explained', () => {
  assert.equal(classifyExit(facts({ watchdogMs: 2000, signal: 'SIGKILL' })).kind, 'watchdog');
  assert.match(classifyExit(facts({ watchdogMs: 2000, signal: 'SIGKILL' })).summary, /2000 ms/);
  const sticky = classifyExit(
    facts({ code: 70, stickyError: { library: 'cuda', api: 'cuCtxSynchronize', code: 700, name: 'CUDA_ERROR_ILLEGAL_ADDRESS', message: '' } }),
  );
  assert.equal(sticky.kind, 'sticky-cuda-error');
  assert.match(sticky.summary, /CUDA_ERROR_ILLEGAL_ADDRESS \(700\)/);
  assert.equal(classifyExit(facts({ signal: 'SIGSEGV' })).kind, 'crashed');
  assert.match(classifyExit(facts({ signal: 'SIGSEGV' })).summary, /segmentation fault/);
  assert.equal(classifyExit(facts({ signal: 'SIGKILL' })).kind, 'killed');
  assert.equal(classifyExit(facts({ code: 1 })).kind, 'crashed');
  assert.equal(classifyExit(facts({ code: 1, beforeReady: true })).kind, 'startup-failed');
  assert.equal(classifyExit(facts({ code: 0 })).kind, 'clean');
  assert.equal(classifyExit(facts({ signal: 'SIGTERM', requested: true })).kind, 'clean');
});

test('the runner protocol refuses garbage', () => {
  for (const garbage of [
    null,
    42,
    'run',
    {},
    { id: 1 },
    { id: 1, type: 'launch' },
    { id: -1, type: 'status' },
    { id: 1, type: 'block', ms: -5 },
    { id: 1, type: 'run', plan: {}, modules: [] },
  ]) {
    assert.equal(runnerRequestSchema.safeParse(garbage).success, false, JSON.stringify(garbage));
  }
  assert.ok(runnerRequestSchema.safeParse({ id: 3, type: 'status' }).success);
});

test('each role is told in its own words, with Electron’s gone-reason, and a cancelled child is not a crash', () => {
  const crash = classifyExit(facts({ signal: 'SIGSEGV', role: 'compile worker' }));
  assert.equal(crash.kind, 'crashed');
  assert.equal(crash.reason, 'crashed');
  assert.match(crash.summary, /^The compile worker died from a segmentation fault/);
  assert.match(crash.summary, /the next compile gets a fresh worker/);
  assert.doesNotMatch(crash.summary, /runner/);
  const cancelled = classifyExit(facts({ signal: 'SIGKILL', cancelled: true, role: 'runner' }));
  assert.deepEqual([cancelled.kind, cancelled.reason], ['cancelled', 'killed']);
  assert.match(cancelled.summary, /because the work was cancelled/);
  assert.equal(classifyExit(facts({ code: 0 })).reason, 'clean-exit');
  assert.equal(classifyExit(facts({ code: 3 })).reason, 'abnormal-exit');
  assert.equal(classifyExit(facts({ code: 1, beforeReady: true, role: 'sanitizer runner' })).reason, 'launch-failed');
  assert.match(classifyExit(facts({ watchdogMs: 500, signal: 'SIGKILL', role: 'compile worker' })).summary, /The compile worker did not answer within 500 ms/);
});
