/**
 * A promise, or `fallback` once `ms` have passed: for calls into a driver that can hang (a GPU that fell off the bus),
 * which the diagnosis must not wait on past its budget. The call itself is not stopped: its answer is just not awaited.
 */
export function within<T>(promise: Promise<T>, ms: number, fallback: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback()), Math.max(0, ms));
    timer.unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
