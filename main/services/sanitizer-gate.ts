import { sanitizerBusyMessage, type SanitizerRun } from '../../core/sanitizer/sanitizer-busy';

/** A run under compute-sanitizer was asked for while another runs (core/sanitizer/sanitizer-busy.ts says why). */
export class SanitizerBusyError extends Error {
  override readonly name = 'SanitizerBusyError';
  constructor(
    readonly running: SanitizerRun,
    message: string,
  ) {
    super(message);
  }
}

/** Where a run's Cancel is, as the host knows it: in the window that asked for it (a request carries no window). */
const CANCEL_WHERE = 'Cancel in the Sanitizer tab of the window that started it; closing that window cancels it too; a run from a terminal stops with Ctrl+C';

/**
 * The host's one run under compute-sanitizer: a plan's (sanitize.plan) or a program's (sanitize.program), whichever
 * window or tab asks. A second request while one runs is refused at once with a SanitizerBusyError; the gate opens
 * again when the run ends, however it ends (a report, a failure, a cancel).
 */
export class SanitizerGate {
  private running: SanitizerRun | null = null;

  constructor(private readonly now: () => number = Date.now) {}

  /** The run under way, or null. */
  current(): SanitizerRun | null {
    return this.running;
  }

  async exclusive<T>(run: Omit<SanitizerRun, 'startedAtMs'>, work: () => Promise<T>): Promise<T> {
    if (this.running) throw new SanitizerBusyError(this.running, sanitizerBusyMessage(this.running, this.now(), CANCEL_WHERE));
    const mine: SanitizerRun = { ...run, startedAtMs: this.now() };
    this.running = mine;
    try {
      return await work();
    } finally {
      if (this.running === mine) this.running = null;
    }
  }
}
