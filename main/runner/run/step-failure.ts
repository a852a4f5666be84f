import type { CudaErrorInfo } from '../../../core/runner/run-result';

/** A step the workbench itself refused (a buffer used before it was allocated, a file that cannot be read…). */
export class StepFailure extends Error {
  constructor(readonly error: CudaErrorInfo) {
    super(error.message);
  }
}

export const workbenchError = (api: string, message: string): StepFailure =>
  new StepFailure({ library: 'workbench', api, code: -1, name: 'WORKBENCH_PLAN_ERROR', message });
