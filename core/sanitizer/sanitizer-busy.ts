import type { SanitizerTool } from './findings';

/**
 * One run under compute-sanitizer at a time, per workbench host: the tool makes every kernel 10 to 100 times slower,
 * and a second run would share the GPU and slow both. A request while one runs is refused in words — which run, since
 * when, and what to do — never dropped without a word and never queued behind a run that may take ten minutes.
 */

/** The code a refused request carries (ApiError.code), so the UI can tell it from a failure of the tool. */
export const SANITIZER_BUSY = 'SANITIZER_BUSY';

/** The run under way, as the refusal names it. */
export interface SanitizerRun {
  tool: SanitizerTool;
  /** What runs under it, in words: "the plan samples/oob-off-by-one/plan.json", "python3 train.py". */
  what: string;
  /** When it started (ms since the epoch, the clock of whoever tells). */
  startedAtMs: number;
}

/** How long, as a person says it: "45 s", "2 min 5 s", "1 h 3 min". */
export function formatElapsed(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return s % 60 ? `${min} min ${s % 60} s` : `${min} min`;
  const h = Math.floor(min / 60);
  return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
}

/** A clock time in the teller's time zone: "14:03:12". */
export const clockTime = (ms: number): string => {
  const d = new Date(ms);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
};

/** The longest description of a run a refusal quotes; a command line can be anything. */
const MAX_WHAT_CHARS = 200;

/**
 * Why a second run was not started: what runs under the tool and since when, and what to do. `cancelWhere` says where
 * its Cancel is, as the teller knows it (the same window, or the one that started it).
 */
export function sanitizerBusyMessage(running: SanitizerRun, nowMs: number, cancelWhere: string, clock: (ms: number) => string = clockTime): string {
  const what = running.what.length > MAX_WHAT_CHARS ? `${running.what.slice(0, MAX_WHAT_CHARS - 1)}…` : running.what;
  return (
    `Not started: compute-sanitizer was already running ${running.tool} on ${what} (since ${clock(running.startedAtMs)}, ` +
    `for ${formatElapsed(nowMs - running.startedAtMs)}). The workbench runs one program under the tool at a time: it slows every ` +
    `kernel 10 to 100 times, and a second run would share the GPU with it. Wait for that run to finish, or cancel it (${cancelWhere}), then start this one again.`
  );
}
