import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * A tag this test process puts into its own environment as it is loaded: every process it starts inherits it, even
 * one its parent left behind (orphaned to init), and nothing a concurrently running suite starts carries it. The GPU
 * suite's "nothing left behind" checks ask for processes with this tag, so two halves of the suite can run at once on
 * a two-GPU host without each counting the other's tools and runners as its own leftovers.
 */
const NAME = 'GPU_WORKBENCH_TEST_RUN';
const value = `${process.pid}-${randomUUID()}`;
process.env[NAME] = value;
const TAG = `${NAME}=${value}`;

/** Whether the process carries this test process's tag (false where its environment cannot be read, or it is gone). */
export function startedByThisTest(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(TAG);
  } catch {
    return false;
  }
}
