import { decodeNvmlBatch, NVML_FUNCTION_NOT_FOUND, type DecodedNvmlSample, type NvmlBatch } from '../../core/memory/nvml-sample-layout';
import { SampleStore, DEFAULT_SAMPLE_LIMITS, type SampleStoreLimits } from '../../core/memory/sample-store';
import { SeriesSummarizer } from '../../core/memory/sample-summary';
import type { MemorySample, SampledProcess } from '../../core/memory/samples';
import type { SamplingStats } from '../../core/memory/monitor-report';
import { toCudaError } from '../runner/cuda-error';
import type { NvmlSource, SamplingThread } from './nvml-source';
import { ProcReader } from './proc-reader';
import { ProcessTracker } from './process-tracker';

export const MIN_INTERVAL_MS = 10;
export const MAX_INTERVAL_MS = 60_000;
/**
 * How often a sampling thread's samples are taken in and handed on, by default: once a second, as nvidia-smi
 * and nvitop refresh. Each drain wakes the JS thread, and on a VM where every kernel entry is dear that is
 * most of what sampling costs above the NVML calls themselves (H100, 100 Hz: four drains a second 0.15–0.4%
 * of a core, one 0.06%).
 */
export const BATCH_MS = 1000;
/** The shortest batch a caller may ask for. */
export const MIN_BATCH_MS = 250;
/** In thread mode, processes are listed at least this often besides whenever device memory moves. */
export const THREAD_PROCESS_NET_MS = 1000;
/** Failures in a row after which sampling gives up (a GPU fallen off the bus answers every call with one). */
export const MAX_CONSECUTIVE_ERRORS = 5;
/** Problems kept for the report (each kind is said once per episode; a session of days could still repeat). */
const MAX_PROBLEMS = 100;

export interface SamplerOptions {
  intervalMs: number;
  /** List processes at most this often (default: at every sample). */
  /** How often the thread's samples are taken in and handed on as a batch (default BATCH_MS). */
  batchMs?: number;
  processIntervalMs?: number;
  /** false: device memory only. */
  includeProcesses?: boolean;
  limits?: SampleStoreLimits;
  /** A call in flight longer than this is reported as a stall (default: the larger of 2 s and 5 intervals). */
  stallMs?: number;
  /** The monitored process, when known at the start. */
  targetPid?: number | null;
  proc?: ProcReader;
}

/**
 * What sampling handed on since the last batch. A sampling thread's samples stay rows until a listener asks
 * for them as objects (`samples`, made once): the CLI's progress line needs only `first` and `latest`.
 */
export class SamplerBatch {
  private made: MemorySample[] | null = null;

  constructor(
    /** Samples a timer took one by one (worker and inline mode). */
    private readonly taken: MemorySample[],
    /** A sampling thread's batches, in order. */
    private readonly threadBatches: NvmlBatch[],
    /** Processes new, still listed, or whose name or flag changed in this batch. */
    readonly processes: SampledProcess[],
  ) {}

  get samples(): MemorySample[] {
    this.made ??= [...this.taken, ...this.threadBatches.flatMap((b) => Array.from({ length: b.count }, (_, i) => b.sample(i)))];
    return this.made;
  }

  get first(): MemorySample | null {
    if (this.taken.length) return this.taken[0]!;
    const b = this.threadBatches.find((t) => t.count > 0);
    return b ? b.sample(0) : null;
  }

  get latest(): MemorySample | null {
    for (let i = this.threadBatches.length - 1; i >= 0; i--) {
      const b = this.threadBatches[i]!;
      if (b.count > 0) return b.sample(b.count - 1);
    }
    return this.taken.at(-1) ?? null;
  }
}

export type SamplerEvent = { kind: 'batch'; batch: SamplerBatch } | { kind: 'problem'; text: string } | { kind: 'failed'; message: string };

/**
 * Samples every device's memory (and the processes on each) through NVML at a set interval, keeping the
 * samples in a bounded store and a running summary. In 'thread' mode a native thread samples and this
 * drains it every BATCH_MS; in 'worker' and 'inline' mode a JS timer takes each sample. Either way ticks
 * are scheduled against the clock, not after each other, so a slow call does not stretch the interval; a
 * tick that finds a call still in flight is skipped and counted (never queued), and a call in flight too
 * long is reported as a stall while the event loop goes on. Every batch (BATCH_MS unless asked) it hands on
 * what it sampled, and re-checks the processes of a listing it has not checked yet.
 */
export class MemorySampler {
  readonly store: SampleStore;
  readonly summary = new SeriesSummarizer();
  readonly tracker: ProcessTracker;
  readonly intervalMs: number;
  readonly processIntervalMs: number;
  private readonly batchMs: number;
  private readonly includeProcesses: boolean;
  private readonly stallMs: number;
  private listener: ((event: SamplerEvent) => void) | null = null;
  private pending: MemorySample[] = [];
  private pendingBatches: NvmlBatch[] = [];
  private timer: NodeJS.Timeout | null = null;
  private batchTimer: NodeJS.Timeout | null = null;
  private nextDue = 0;
  private lastProcessAt = -Infinity;
  private running = false;
  private stallReported = false;
  private readonly reportedProcessErrors = new Set<string>();
  private consecutiveErrors = 0;
  private nativeUsTotal = 0;
  private stats = { samples: 0, skipped: 0, errors: 0, stalls: 0 };
  private latestSample: MemorySample | null = null;
  /** The time of the newest sample that listed processes (one that did not says nothing about them). */
  private latestListingUs: number | null = null;
  private refreshedListingUs: number | null = null;
  private latestReserved: (number | null)[] = [];
  private failure: string | null = null;
  private inFlight: Promise<void> | null = null;
  private thread: SamplingThread | null = null;
  /** The thread's totals at the last drain. */
  private threadSeen = { skipped: 0, dropped: 0, errors: 0 };
  readonly problems: string[] = [];

  constructor(
    readonly source: NvmlSource,
    options: SamplerOptions,
  ) {
    if (!(options.intervalMs >= MIN_INTERVAL_MS && options.intervalMs <= MAX_INTERVAL_MS))
      throw new RangeError(`The interval must be between ${MIN_INTERVAL_MS} ms and ${MAX_INTERVAL_MS / 1000} s, not ${options.intervalMs} ms.`);
    this.intervalMs = options.intervalMs;
    // The sampling thread also lists processes whenever a device's used memory moves (native/src/monitor.cc),
    // so its periodic listing is only the net for what that cannot see; the other modes list on their period.
    const processDefaultMs = source.mode === 'thread' ? Math.max(this.intervalMs, THREAD_PROCESS_NET_MS) : this.intervalMs;
    this.processIntervalMs = Math.max(this.intervalMs, options.processIntervalMs ?? processDefaultMs);
    this.includeProcesses = options.includeProcesses ?? true;
    this.batchMs = Math.max(MIN_BATCH_MS, options.batchMs ?? BATCH_MS);
    this.stallMs = options.stallMs ?? Math.max(2000, 5 * this.intervalMs);
    this.store = new SampleStore(source.devices.length, options.limits ?? DEFAULT_SAMPLE_LIMITS);
    this.tracker = new ProcessTracker(options.proc ?? new ProcReader(), { targetPid: options.targetPid ?? null, hostPid: process.pid }, (pid) =>
      source.processName(pid),
    );
  }

  /** One listener: batches, problems as they happen, and the failure that ends sampling. */
  listen(listener: (event: SamplerEvent) => void): void {
    this.listener = listener;
  }

  get latest(): MemorySample | null {
    return this.latestSample;
  }

  /** The pids the newest process listing named. */
  get listedNow(): Set<number> {
    return new Set(this.latestListingUs === null ? [] : this.tracker.listedAt(this.latestListingUs));
  }

  get reservedBytes(): (number | null)[] {
    return this.latestReserved;
  }

  /** Why sampling gave up, or null. */
  get failed(): string | null {
    return this.failure;
  }

  /** Whether an NVML call of this sampler is still running (a wedged driver: the process must exit on purpose). */
  get callInFlight(): boolean {
    return this.inFlight !== null;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    if (this.source.mode === 'thread') {
      const every = this.includeProcesses ? Math.max(1, Math.round(this.processIntervalMs / this.intervalMs)) : 0;
      try {
        this.thread = this.source.startThread(this.intervalMs, every);
      } catch (error) {
        this.fail(toCudaError(error, 'nvmlInit_v2'));
        return;
      }
      this.batchTimer = setInterval(() => {
        this.drain();
        this.flush();
      }, this.batchMs);
      return;
    }
    this.nextDue = performance.now();
    this.tick();
    this.batchTimer = setInterval(() => this.flush(), this.batchMs);
  }

  /** Takes one sample now (outside the schedule): the baseline before a command starts, the last one at the end. */
  async sampleNow(): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (this.inFlight) await this.inFlight;
      const before = this.stats.samples + this.stats.errors;
      await this.take(true);
      if (this.stats.samples + this.stats.errors > before) return;
      await new Promise((resolve) => setTimeout(resolve, MIN_INTERVAL_MS)); // another session's call was in flight
    }
  }

  /** Stops ticking, re-checks the processes once more and hands on the last batch. An NVML call in flight is not waited for. */
  stop(): void {
    if (!this.running && !this.timer && !this.thread) return;
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    if (this.batchTimer) clearInterval(this.batchTimer);
    this.timer = this.batchTimer = null;
    if (this.thread) {
      this.drain(); // may fail and so stop (and clear the thread) itself
      this.thread?.stop();
      this.thread = null;
    }
    this.flush();
  }

  setTarget(pid: number | null): void {
    this.tracker.setTarget(pid);
  }

  samplingStats(): SamplingStats {
    return {
      intervalMs: this.intervalMs,
      processIntervalMs: this.includeProcesses ? this.processIntervalMs : 0,
      mode: this.source.mode,
      samples: this.stats.samples,
      kept: this.store.length,
      skipped: this.stats.skipped,
      errors: this.stats.errors,
      stalls: this.stats.stalls,
      meanNativeUs: this.stats.samples ? this.nativeUsTotal / this.stats.samples : 0,
    };
  }

  private tick(): void {
    if (!this.running) return;
    const now = performance.now();
    // The next tick against the clock; ticks the host was too busy for are skipped, not caught up.
    this.nextDue += this.intervalMs;
    if (this.nextDue < now) {
      const missed = Math.ceil((now - this.nextDue) / this.intervalMs);
      this.stats.skipped += missed;
      this.nextDue += missed * this.intervalMs;
    }
    this.timer = setTimeout(() => this.tick(), Math.max(0, this.nextDue - now));
    const since = this.source.inFlightSince();
    if (since !== null) {
      this.stats.skipped++;
      if (now - since > this.stallMs && !this.stallReported) {
        this.stallReported = true;
        this.stats.stalls++;
        this.problem(
          `NVML has not answered for ${((now - since) / 1000).toFixed(1)} s: the GPU or its driver may be wedged (\`nvidia-smi\` would hang too; \`dmesg\` shows Xid errors). Sampling waits for it; Ctrl-C or Stop still work.`,
        );
      }
      return;
    }
    const withProcesses = this.includeProcesses && now - this.lastProcessAt >= this.processIntervalMs - this.intervalMs / 2;
    if (withProcesses) this.lastProcessAt = now;
    void this.take(withProcesses);
  }

  private async take(withProcesses: boolean): Promise<void> {
    let done!: () => void;
    this.inFlight = new Promise((resolve) => (done = resolve));
    try {
      const decoded = await this.source.take(withProcesses && this.includeProcesses);
      if (decoded === null) {
        this.stats.skipped++;
        return;
      }
      this.stallReported = false;
      this.consecutiveErrors = 0;
      this.record(decoded);
    } catch (error) {
      this.stats.errors++;
      this.consecutiveErrors++;
      const e = toCudaError(error, 'nvmlDeviceGetMemoryInfo');
      if (this.consecutiveErrors === 1) this.problem(`An NVML sample failed: ${e.api} returned ${e.name}: ${e.message}`);
      if (this.consecutiveErrors >= MAX_CONSECUTIVE_ERRORS) this.fail(e);
    } finally {
      this.inFlight = null;
      done();
    }
  }

  /** Takes what the sampling thread sampled since the last drain, and its news: skipped ticks, errors, a call stuck. */
  private drain(): void {
    const thread = this.thread;
    if (!thread) return;
    const taken = thread.take();
    let batch: NvmlBatch;
    try {
      batch = decodeNvmlBatch(taken, this.store.deviceCount);
    } catch (error) {
      // Never seen: the layout is ours. Said and stopped, rather than recorded wrong or thrown from a timer.
      this.fail({ api: 'nvmlSamplerTake', name: 'WORKBENCH_BAD_SAMPLE', message: error instanceof Error ? error.message : String(error) });
      return;
    }
    this.recordBatch(batch);
    this.stats.skipped += taken.skipped - this.threadSeen.skipped + (taken.dropped - this.threadSeen.dropped);
    const newErrors = taken.errors - this.threadSeen.errors;
    this.threadSeen = { skipped: taken.skipped, dropped: taken.dropped, errors: taken.errors };
    if (newErrors > 0) {
      this.stats.errors += newErrors;
      const e = toCudaError(taken.lastError, 'nvmlDeviceGetMemoryInfo');
      if (this.consecutiveErrors === 0) this.problem(`An NVML sample failed: ${e.api} returned ${e.name}: ${e.message}`);
      this.consecutiveErrors = taken.consecutiveErrors;
      if (taken.consecutiveErrors >= MAX_CONSECUTIVE_ERRORS) this.fail(e);
    } else if (taken.samples > 0) this.consecutiveErrors = 0;
    if (!taken.running && this.thread) {
      // The thread ended though nobody stopped it (never seen: its timer would have to fail).
      const e = taken.lastError ?? { api: 'nvmlSamplerTake', name: 'WORKBENCH_SAMPLER_ENDED', message: 'the sampling thread ended on its own' };
      this.fail({ api: e.api, name: 'WORKBENCH_SAMPLER_ENDED', message: e.message });
      return;
    }
    if (taken.inFlightMs > this.stallMs && !this.stallReported) {
      this.stallReported = true;
      this.stats.stalls++;
      this.problem(
        `NVML has not answered for ${(taken.inFlightMs / 1000).toFixed(1)} s: the GPU or its driver may be wedged (\`nvidia-smi\` would hang too; \`dmesg\` shows Xid errors). Sampling waits for it; Ctrl-C or Stop still work.`,
      );
    } else if (taken.inFlightMs === 0) this.stallReported = false;
  }

  private fail(e: { api: string; name: string; message: string }): void {
    if (this.failure !== null) return;
    this.failure =
      e.name === 'WORKBENCH_BAD_SAMPLE'
        ? `The sampling thread handed over a sample that does not fit its layout (${e.message}): sampling stopped. This is a bug in GPU Workbench; please report it.`
        : e.name === 'WORKBENCH_SAMPLER_ENDED'
          ? `The sampling thread stopped on its own (${e.api}: ${e.message}): no samples after this point. Start monitoring again; if it recurs, please report it.`
          : `NVML failed (${e.api}: ${e.name}, ${e.message})${this.consecutiveErrors >= MAX_CONSECUTIVE_ERRORS ? ` ${MAX_CONSECUTIVE_ERRORS} times in a row` : ''}. If the GPU has fallen off the bus, \`dmesg\` shows an Xid error and only a reset or reboot brings it back.`;
    this.stop();
    this.listener?.({ kind: 'failed', message: this.failure });
  }

  private record(decoded: DecodedNvmlSample): void {
    const { sample } = decoded;
    this.stats.samples++;
    this.nativeUsTotal += decoded.nativeUs;
    this.store.push(sample);
    this.summary.observe(sample);
    this.tracker.observe(sample);
    this.latestSample = sample;
    if (sample.processes !== null) this.latestListingUs = sample.timeUs;
    this.latestReserved = decoded.reservedBytes;
    if (this.listener) this.pending.push(sample);
    this.reportProcessErrors(decoded.processErrors);
  }

  /** A sampling thread's batch: into the store and the summary as rows; objects only for the samples that listed processes, and the newest. */
  private recordBatch(batch: NvmlBatch): void {
    if (batch.count === 0) return;
    this.stats.samples += batch.count;
    this.nativeUsTotal += batch.nativeUs;
    this.store.appendRows(batch.rows, batch.count, batch.listings);
    this.summary.observeRows(batch.rows, batch.count, batch.deviceCount, batch.listings);
    for (const listing of batch.listings) {
      if (listing.processes !== null) {
        const sample = batch.sample(listing.row, listing.processes);
        this.tracker.observe(sample);
        this.latestListingUs = sample.timeUs;
      }
      this.reportProcessErrors(listing.processErrors);
    }
    this.latestSample = batch.sample(batch.count - 1);
    this.latestReserved = batch.reservedBytes;
    if (this.listener) this.pendingBatches.push(batch);
  }

  private reportProcessErrors(errors: readonly { device: number; code: number }[]): void {
    for (const { device, code } of errors) {
      const key = `${device}:${code}`;
      if (this.reportedProcessErrors.has(key)) continue;
      this.reportedProcessErrors.add(key);
      this.problem(
        code === NVML_FUNCTION_NOT_FOUND
          ? `This driver's NVML has no nvmlDeviceGetComputeRunningProcesses_v3: per-process memory is not shown (device memory still is). A driver from 510 on has it.`
          : `NVML could not list the processes on GPU ${device} (error ${code}${code === 3 ? ': not supported on this GPU or in this VM' : ''}): per-process memory is not shown there.`,
      );
    }
  }

  private flush(): void {
    // Liveness is re-read from /proc once per listing, not per batch: on a VM every read is several costly
    // kernel entries, and a listing comes at least every THREAD_PROCESS_NET_MS.
    if (this.latestListingUs !== null && this.latestListingUs !== this.refreshedListingUs) {
      this.refreshedListingUs = this.latestListingUs;
      this.tracker.refresh(Date.now() * 1000, this.latestListingUs);
    }
    const processes = this.tracker.takeChanged();
    if (!this.listener) return;
    if (!this.pending.length && !this.pendingBatches.length && !processes.length) return;
    const batch = new SamplerBatch(this.pending, this.pendingBatches, processes);
    this.pending = [];
    this.pendingBatches = [];
    this.listener({ kind: 'batch', batch });
  }

  private problem(text: string): void {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(text);
    this.listener?.({ kind: 'problem', text });
  }
}
