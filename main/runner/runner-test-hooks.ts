/**
 * What the lifecycle tests' runner answers beside the runner protocol: `block`, which occupies the runner's event
 * loop as a hung driver call would, so the supervisor's watchdog, stop and cancel are tested on a real process
 * without a GPU. Compiled in only where WORKBENCH_TEST_HOOKS is true (main/build-flags.d.ts): runner-entry.ts reaches
 * this module only behind that flag, and it holds nothing but functions, so the shipped runner drops it whole.
 */
import * as z from 'zod';

import { runnerRequestSchema, type RunnerProtocol, type RunnerStatus } from '../../core/runner/protocol';
import { replies, type ChildPort } from '../process/child-port';

export type BlockRequest = { id: number; type: 'block'; ms: number };

/** The test runner's requests: the protocol's and `block`. */
export function testRunnerRequestSchema() {
  const block = z.object({ id: z.number().int().nonnegative(), type: z.literal('block'), ms: z.number().int().min(0).max(600_000) });
  return z.union([runnerRequestSchema, block]);
}

/** Blocks this thread for `ms` (no event is served meanwhile) and says how long it was blocked. */
function block(request: BlockRequest): { blockedMs: number } {
  const until = Date.now() + request.ms;
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, request.ms);
  return { blockedMs: request.ms - Math.max(0, until - Date.now()) };
}

/** The test runner's protocol, typed for the tests' requests. */
export type TestRunnerProtocol = RunnerProtocol & { block: { request: { ms: number }; result: { blockedMs: number } } };

/** Answers a test request as the runner answers its own: one reply for its id. */
export function answerTestRequest(port: ChildPort, request: BlockRequest): void {
  replies<TestRunnerProtocol, RunnerStatus>(port).ok(request.id, request.type, block(request));
}
