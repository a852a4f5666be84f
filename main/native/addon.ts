import type { RawDevice } from '../../core/devices';
import type { LibraryReport } from '../../core/discovery';
import type { NvmlHealthFacts } from '../../core/doctor/facts';
import type { NvmlBatchInput } from '../../core/memory/nvml-sample-layout';
import type { FunctionAttributes } from '../../core/runner/run-result';
import { addonPath } from '../paths';

export interface Candidate {
  path: string;
  source: string;
}

export interface NvmlSnapshotRaw {
  driverVersion: string;
  devices: {
    index: number;
    uuid: string;
    /** NVML's product name; empty where the driver lacks nvmlDeviceGetName. */
    name: string;
    memory: { totalBytes: number; freeBytes: number; usedBytes: number };
    processes: { pid: number; usedBytes: number | null; name: string }[] | null;
  }[];
}

/**
 * What a sampling thread sampled since the last take (native/src/monitor.cc), laid out as the sample store
 * keeps it (core/memory/nvml-sample-layout.ts, decodeNvmlBatch, reads it):
 * - rows: per sample its time (µs since the Unix epoch), then per device used, free and total bytes;
 * - listings: per sample that listed processes, its row, then per device the status (-1: not asked; 0: listed;
 *   else NVML's error), P, and P × (pid, used bytes or NaN);
 * - reserved: the newest sample's driver reserve per device (NaN where the driver lacks the v2 query).
 * Counts (dropped, skipped, errors) are totals since the start.
 */
export interface NvmlSamplerTake extends NvmlBatchInput {
  /** Samples lost because nobody took them in time (the buffer is bounded). */
  dropped: number;
  /** Ticks missed because a call ran past them. */
  skipped: number;
  errors: number;
  consecutiveErrors: number;
  lastError: { library: string; api: string; code: number; name: string; message: string } | null;
  /** false once the thread has ended: stopped, or on its own (lastError says why). */
  running: boolean;
  /** How long the NVML call in flight has run, ms; 0 when none. */
  inFlightMs: number;
}

export interface NvrtcOutput {
  ok: boolean;
  log: string;
  ptx: string | null;
  cubin: Uint8Array | null;
  lowered: Record<string, string>;
}

/** The addon's surface (native/src/addon.cc). Every async call rejects with { library, api, code, name, message }. */
export interface NativeAddon {
  abiVersion: number;
  /** Run every later call on the JS thread, its promise settled on return (native/src/async.h). */
  setInline(enabled: boolean): void;
  /** setpgid(0, 0): true when this process now leads a process group of its own. */
  leadProcessGroup(): boolean;
  /** PR_SET_PDEATHSIG = SIGKILL: dies with the host whatever its JavaScript thread is doing. */
  dieWithParent(): boolean;
  /** setrlimit(RLIMIT_DATA, bytes): caps this process's writable memory, its V8 heap and buffers together. */
  limitWritableMemory(bytes: number): boolean;
  loadLibraries(candidates: { cuda: Candidate[]; nvrtc: Candidate[]; nvml: Candidate[] }): {
    cuda: LibraryReport;
    nvrtc: LibraryReport;
    nvml: LibraryReport;
  };
  listDevices(attributeIds: readonly number[]): Promise<RawDevice[]>;
  nvmlSnapshot(): Promise<NvmlSnapshotRaw>;
  /**
   * Each GPU's modes, ECC counts, page retirement, row remapping and clock event reasons (native/src/health.cc):
   * every field answers for itself, { ok: false, code } where NVML said NOT_SUPPORTED or lacks the query.
   * Rejects only when NVML itself cannot start or count its devices.
   */
  nvmlHealth(): Promise<NvmlHealthFacts>;
  /**
   * One memory sample of every device (and, when asked, the compute processes on each), off the JS thread.
   * Device handles are fetched once. The flat layout is core/memory/nvml-sample-layout.ts's.
   */
  nvmlSample(includeProcesses: boolean): Promise<Float64Array>;
  /** nvmlSample on the JS thread: no thread hop, but a wedged driver would stall the caller's event loop. */
  nvmlSampleSync(includeProcesses: boolean): Float64Array;
  /** NVML's name for a process (nvmlSystemGetProcessName), or null where it has none. */
  nvmlProcessName(pid: number): Promise<string | null>;
  /**
   * Starts a thread of its own that samples every `intervalMs` (processes listed every `processEvery`-th
   * sample; 0: never) into a buffer; returns its id. Throws the structured error when NVML cannot start.
   */
  nvmlSamplerStart(intervalMs: number, processEvery: number): number;
  /** What the thread sampled since the last take (see NvmlSamplerTake). */
  nvmlSamplerTake(id: number): NvmlSamplerTake;
  /** Asks the thread to end (one blocked in NVML ends when NVML returns); false for an unknown id. */
  nvmlSamplerStop(id: number): boolean;
  openContext(ordinal: number): Promise<void>;
  closeContext(): Promise<void>;
  synchronize(): Promise<void>;
  /**
   * Records the run's time origin event on the default stream (native/src/context.cc). Until the next call,
   * launch() places each timed launch after it; a rejection leaves no origin, and launches return no `gpu`.
   */
  markTimeOrigin(): Promise<void>;
  loadModule(image: Uint8Array): Promise<number>;
  unloadModule(moduleId: number): Promise<void>;
  getFunction(moduleId: number, name: string): Promise<{ id: number; attributes: FunctionAttributes }>;
  setFunctionAttribute(functionId: number, attribute: number, value: number): Promise<void>;
  memGetInfo(): Promise<{ freeBytes: number; totalBytes: number }>;
  memAlloc(bytes: number): Promise<bigint>;
  memFree(pointer: bigint): Promise<void>;
  /** bytes + 2 × guardBytes, guards filled with guardByte, the inside with poisonByte (−1: untouched); the base pointer. */
  memAllocGuarded(bytes: number, guardBytes: number, guardByte: number, poisonByte: number): Promise<bigint>;
  memcpyHtoD(pointer: bigint, data: Uint8Array): Promise<number>;
  /** Fills `into` (all of it) from the device; the copy's milliseconds. */
  memcpyDtoH(pointer: bigint, into: Uint8Array): Promise<number>;
  memsetD8(pointer: bigint, value: number, bytes: number): Promise<void>;
  /** `bytes` from each pointer, concatenated, copied in one call. */
  memcpyDtoHRegions(pointers: bigint[], bytes: number): Promise<Uint8Array>;
  /** Points fds 1 and 2 at an anonymous file (device printf and assert text); false where it cannot. */
  captureOutputStart(): boolean;
  /** What was written since the last take (at most maxBytes; the rest counted in droppedBytes). */
  captureOutputTake(maxBytes: number): { text: string; droppedBytes: number };
  captureOutputStop(): void;
  /** The minimum, maximum and sum of a buffer's f32 or f64 elements into out[0..2] (native/src/stats.cc). */
  floatSums(bytes: Uint8Array, isF64: boolean, out: Float64Array): void;
  launch(spec: {
    functionId: number;
    grid: readonly number[];
    block: readonly number[];
    sharedBytes: number;
    args: Uint8Array[];
    warmup: number;
    repeats: number;
  }): Promise<{
    timesMs: number[];
    /** Each timed launch's start and end on the GPU, ms after the time origin; empty without one (never an error). */
    gpu: { startMs: number; endMs: number }[];
  }>;
  probeLaunches(spec: {
    functionId: number;
    configs: Float64Array;
    args: Uint8Array[];
    raiseDynamicShared?: boolean;
  }): Promise<{ launch: Int32Array; sync: Int32Array; occupancy: Int32Array }>;
  nvrtcCompile(spec: { source: string; name: string; options: string[]; nameExpressions: string[] }): Promise<NvrtcOutput>;
}

export type AddonState = { addon: NativeAddon; path: string; error: null } | { addon: null; path: string; error: string };

let state: AddonState | null = null;

/** Loads the .node file once. A missing or broken build is a reported state, never a throw. */
export function loadAddon(): AddonState {
  if (state) return state;
  const path = addonPath();
  try {
    const addon = require(path) as NativeAddon;
    state = { addon, path, error: null };
  } catch (error) {
    state = { addon: null, path, error: error instanceof Error ? error.message.split('\n')[0]! : String(error) };
  }
  return state;
}

export function requireAddon(): NativeAddon {
  const s = loadAddon();
  if (!s.addon) throw new Error(`The native addon could not be loaded from ${s.path}: ${s.error}. Run \`npm ci\` or \`npm run build\`.`);
  return s.addon;
}
