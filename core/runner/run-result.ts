import type { Dim3 } from '../dims';
import type { BufferSummary } from '../plan/buffer-data';

/** A CUDA (or NVRTC, NVML, workbench) failure as it crosses the addon boundary. */
export interface CudaErrorInfo {
  library: string;
  api: string;
  code: number;
  name: string;
  message: string;
}

export interface FunctionAttributes {
  maxThreadsPerBlock: number;
  sharedSizeBytes: number;
  constSizeBytes: number;
  localSizeBytes: number;
  numRegs: number;
  ptxVersion: number;
  binaryVersion: number;
  maxDynamicSharedSizeBytes: number;
}

export interface StepRecord {
  index: number;
  op: string;
  label: string;
  ms: number | null;
}

export interface LaunchRecord {
  stepIndex: number;
  kernel: string;
  entry: string;
  grid: Dim3;
  block: Dim3;
  sharedBytes: number;
  timesMs: number[];
  minMs: number;
  medianMs: number;
  maxMs: number;
}

export interface RunFailure {
  stepIndex: number | null;
  op: string;
  kernel: string | null;
  error: CudaErrorInfo;
  sticky: boolean;
}

export interface RunResult {
  ok: boolean;
  device: { ordinal: number; name: string };
  functions: { kernel: string; entry: string; attributes: FunctionAttributes }[];
  steps: StepRecord[];
  launches: LaunchRecord[];
  buffers: BufferSummary[];
  /** Buffers still allocated when the plan ended: a leak in the plan. */
  leaks: { name: string; bytes: number }[];
  failure: RunFailure | null;
  runnerPid: number;
}

export function timingStats(times: number[]): { minMs: number; medianMs: number; maxMs: number } {
  if (times.length === 0) return { minMs: 0, medianMs: 0, maxMs: 0 };
  const sorted = [...times].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { minMs: sorted[0]!, medianMs: median, maxMs: sorted[sorted.length - 1]! };
}
