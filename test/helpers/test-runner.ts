import { join } from 'node:path';

import type { RunnerStatus } from '../../core/runner/protocol';
import type { ProcessLauncher } from '../../main/process/launcher';
import { SupervisedProcess } from '../../main/process/supervised-process';
import { RunnerPool, type Runner, type RunnerPoolOptions } from '../../main/runner/runner-pool';
import type { TestRunnerProtocol } from '../../main/runner/runner-test-hooks';
import { ROOT } from './cli';

/**
 * The runner built with its test hooks (scripts/bundle.mjs: WORKBENCH_TEST_HOOKS): it also answers `block`, which
 * holds its thread as a hung driver call would. The shipped runner (dist/main/runner.js) refuses it.
 */
export const TEST_RUNNER_ENTRY = join(ROOT, 'dist/test/helpers/test-runner.js');

/** A runner of the test build, typed for its `block` request. */
export type TestRunner = SupervisedProcess<RunnerStatus, TestRunnerProtocol>;

/** A pool of test-build runners. */
export const testRunnerPool = (options: Omit<RunnerPoolOptions, 'entry'>): RunnerPool => new RunnerPool({ ...options, entry: TEST_RUNNER_ENTRY });

/** A runner from a testRunnerPool, typed as what it is. */
export const hooked = (runner: Runner): TestRunner => runner as unknown as TestRunner;

/**
 * A supervised child the tests may send anything: requests outside its protocol, and messages that are not
 * requests at all, to show that it refuses them and lives.
 */
export class ProbedProcess extends SupervisedProcess<RunnerStatus, TestRunnerProtocol> {
  /** Sends any object as a request and waits for its reply. */
  requestUnchecked(body: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    return this.post(body, timeoutMs);
  }

  /** Sends a message of any shape, not even a request. */
  sendRaw(message: unknown): void {
    this.child.send(message);
  }
}

/** The shipped runner for device 0, probed. */
export const probedRunner = (launcher: ProcessLauncher, entry: string): ProbedProcess =>
  new ProbedProcess({ launcher, entry, args: ['0'], name: 'runner for device 0', role: 'runner', readyTimeoutMs: 30_000 });
