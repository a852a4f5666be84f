/**
 * How an Electron utility process ended, told as child_process tells it (an exit code, or the signal that ended
 * it), so that the supervisor classifies a utility child exactly as it classifies a forked one
 * (core/runner/protocol.ts classifyExit). No Electron import: the decisions are tested here, where Electron cannot
 * run, and utility-launcher.ts only wires them to its events.
 *
 * What Electron gives:
 * - the utility process's `exit` event: a number, "the exit code obtained from waitpid". Which number depends on
 *   the path that noticed the end first: the child's own process.exit(n) arrives as n itself, while a crash or a
 *   kill arrives as the raw POSIX wait status (9 for SIGKILL, 3 << 8 for exit(3)). On its own it cannot tell
 *   exit(9) from SIGKILL.
 * - the app's `child-process-gone` event, for every end but a clean one: `reason` (Chromium's termination status)
 *   and `exitCode`, on POSIX always the raw wait status. With it the end is certain.
 *
 * So: an exit with code 0 is clean at once; any other exit waits a moment for its gone event, and without one is
 * told from the code alone.
 */
import { constants } from 'node:os';

/** How a process ended, as child_process says it: one of the two is set (both null only where nothing is known). */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Chromium's termination statuses, as `child-process-gone` names them. */
export type GoneReasonName = 'clean-exit' | 'abnormal-exit' | 'killed' | 'crashed' | 'oom' | 'launch-failed' | 'integrity-failure' | 'memory-eviction';

/** The part of `child-process-gone`'s details this module reads (Electron's `Details`). */
export interface GoneDetails {
  type: string;
  reason: string;
  exitCode: number;
  name?: string;
  serviceName?: string;
}

/** Signal numbers' names on this platform; of two names for one number (SIGABRT and SIGIOT) the first, the usual one. */
const SIGNAL_NAMES = new Map<number, NodeJS.Signals>();
for (const [name, number] of Object.entries(constants.signals)) if (!SIGNAL_NAMES.has(number)) SIGNAL_NAMES.set(number, name as NodeJS.Signals);

/** A signal's name from its number on this platform, or null for none it knows. */
const signalName = (n: number): NodeJS.Signals | null => SIGNAL_NAMES.get(n) ?? null;

/**
 * A raw POSIX wait status (waitpid's `status`): the exit code of a process that exited, or the signal that ended one
 * (the core-dump bit, 0x80, set aside). Null for a status that is neither (a stopped process, or not a status).
 */
export function decodeWaitStatus(status: number): ExitStatus | null {
  if (!Number.isInteger(status) || status < 0 || status > 0xffff) return null;
  const low = status & 0x7f;
  if (low === 0) return { code: (status >> 8) & 0xff, signal: null };
  if (low === 0x7f) return null; // stopped, not ended
  const signal = signalName(low);
  return signal ? { code: null, signal } : null;
}

/** The end of a child from its `child-process-gone` details: reason first, the status for which signal or code. */
export function exitFromGone(details: Pick<GoneDetails, 'reason' | 'exitCode'>, platform: NodeJS.Platform = process.platform): ExitStatus {
  const posix = platform !== 'win32';
  const decoded = posix ? decodeWaitStatus(details.exitCode) : null;
  const nonZero = details.exitCode !== 0 ? details.exitCode : 1;
  switch (details.reason as GoneReasonName) {
    case 'clean-exit':
      return { code: 0, signal: null };
    case 'abnormal-exit':
    case 'integrity-failure':
      // A non-zero exit (or, on Windows, a binary that failed its code-integrity check); a wait status that is a
      // signal's (one Chromium counts as neither a crash nor a kill) says so.
      return decoded ?? { code: nonZero, signal: null };
    case 'killed':
    case 'oom':
    case 'memory-eviction':
      // Killed from outside: SIGKILL, SIGTERM or SIGINT as the status says; the out-of-memory killer's is SIGKILL.
      return decoded?.signal ? decoded : { code: null, signal: 'SIGKILL' };
    case 'crashed':
      // A fault: SIGSEGV, SIGABRT, SIGBUS… as the status says. Windows gives the exception code (0xC0000005…).
      return decoded?.signal ? decoded : { code: nonZero, signal: null };
    case 'launch-failed':
      // It never ran: the code is the platform's launch error, not a wait status; before its ready, a failed start.
      return { code: nonZero, signal: null };
    default:
      return decoded ?? { code: nonZero, signal: null };
  }
}

/**
 * The end of a child from its `exit` event alone (no gone event came): the code as its own exit code, unless it can
 * only be a raw wait status (past 255 on POSIX: exit(n) << 8).
 */
export function exitFromCode(code: number, platform: NodeJS.Platform = process.platform): ExitStatus {
  if (platform !== 'win32' && code > 0xff) return decodeWaitStatus(code) ?? { code, signal: null };
  return { code, signal: null };
}

/** Whether a `child-process-gone` is about the utility process started with this service name. */
export function goneIsFor(details: GoneDetails, serviceName: string): boolean {
  return details.type === 'Utility' && (details.name === serviceName || details.serviceName === serviceName);
}

/** How long an exit other than a clean one waits for its `child-process-gone`. */
export const GONE_WAIT_MS = 250;

export interface UtilityExitWatch {
  /** The utility process's `exit` event. */
  exited(code: number): void;
  /** The app's `child-process-gone` event for this child. */
  gone(details: Pick<GoneDetails, 'reason' | 'exitCode'>): void;
}

export interface UtilityExitOptions {
  waitMs?: number;
  platform?: NodeJS.Platform;
  /** For tests: a timer that can be run by hand. Returns its cancel. */
  setTimer?: (run: () => void, ms: number) => () => void;
}

const realTimer = (run: () => void, ms: number): (() => void) => {
  const timer = setTimeout(run, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

/**
 * Joins a utility process's two reports of its end, in whichever order they come, into one `report` of how it
 * ended: at once for a gone event or a clean exit, else after `waitMs` from the exit code alone. Reports once.
 */
export function watchUtilityExit(report: (status: ExitStatus) => void, options: UtilityExitOptions = {}): UtilityExitWatch {
  const platform = options.platform ?? process.platform;
  const setTimer = options.setTimer ?? realTimer;
  let done = false;
  let cancelWait: (() => void) | null = null;
  const finish = (status: ExitStatus) => {
    if (done) return;
    done = true;
    cancelWait?.();
    report(status);
  };
  return {
    exited(code) {
      if (done || cancelWait) return;
      if (code === 0) return finish({ code: 0, signal: null });
      cancelWait = setTimer(() => finish(exitFromCode(code, platform)), options.waitMs ?? GONE_WAIT_MS);
    },
    gone(details) {
      finish(exitFromGone(details, platform));
    },
  };
}

/**
 * Routes the app's `child-process-gone` events to the utility process each is about, by the unique service name each
 * was started with. One router per app; `serviceName` hands out the names.
 */
export class GoneRouter {
  private readonly watches = new Map<string, UtilityExitWatch>();
  private started = 0;

  /** A service name no other child of this app has: the role's name and a number. */
  serviceName(name: string): string {
    return `gpu-workbench ${name} #${++this.started}`;
  }

  watch(serviceName: string, watch: UtilityExitWatch): void {
    this.watches.set(serviceName, watch);
  }

  forget(serviceName: string): void {
    this.watches.delete(serviceName);
  }

  /** Delivers a gone event to its child's watch; false when it is about no child of ours (a GPU process, say). */
  route(details: GoneDetails): boolean {
    for (const [name, watch] of this.watches) {
      if (!goneIsFor(details, name)) continue;
      this.watches.delete(name);
      watch.gone(details);
      return true;
    }
    return false;
  }
}
