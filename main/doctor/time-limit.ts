import type { Collected } from '../../core/doctor/facts';
import { toCudaError } from '../runner/cuda-error';

/**
 * Every doctor collector runs under a time limit: a wedged GPU can block a driver or NVML call for minutes, and
 * the doctor must still answer ("did not answer within 5 s" is its finding). A call that ran over cannot be
 * stopped — it is a native call on a worker thread — so it is remembered: a later collector of the same kind
 * waits on that same call instead of starting another one that would block another thread, and the CLI knows
 * to exit rather than wait for it.
 */

const inFlight = new Map<string, Promise<unknown>>();
let stuck = 0;

/** Calls that ran over their limit and have not returned yet. */
export const callsStillBlocked = (): number => stuck;

const seconds = (ms: number) => `${+(ms / 1000).toFixed(1)} s`;

export async function collect<T>(
  /** Names the call in the finding: "NVML (nvmlInit and the device queries)". */
  what: string,
  limitMs: number,
  work: () => Promise<T>,
  /** Calls with one key share one call while it runs. */
  key: string = what,
): Promise<Collected<T>> {
  const started = performance.now();
  let call = inFlight.get(key) as Promise<T> | undefined;
  if (!call) {
    try {
      call = work();
    } catch (error) {
      call = Promise.reject(error);
    }
    inFlight.set(key, call);
    const settled = call;
    void settled.then(
      () => inFlight.get(key) === settled && inFlight.delete(key),
      () => inFlight.get(key) === settled && inFlight.delete(key),
    );
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<'timed-out'>((resolve) => {
    timer = setTimeout(() => resolve('timed-out'), limitMs);
  });
  const answer = call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  try {
    const outcome = await Promise.race([answer, limit]);
    const ms = Math.round(performance.now() - started);
    if (outcome === 'timed-out') {
      stuck++;
      void answer.then(() => stuck--);
      return { status: 'timed-out', limitMs, detail: `${what} did not answer within ${seconds(limitMs)}.` };
    }
    if ('error' in outcome) {
      const error = outcome.error;
      const structured = error && typeof error === 'object' && 'api' in error ? toCudaError(error, what) : null;
      return {
        status: 'failed',
        ms,
        detail: `${what} failed: ${error instanceof Error ? error.message : String(error)}`,
        error: structured ? { api: structured.api, code: structured.code, name: structured.name } : null,
      };
    }
    return { status: 'ok', ms, value: outcome.value };
  } finally {
    clearTimeout(timer);
  }
}
