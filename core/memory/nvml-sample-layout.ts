/**
 * The flat array one NVML sample comes in (native/src/monitor.cc): no object per device or process, so a
 * sample costs one allocation to build in C++ and nothing to read here but numbers.
 *
 *   [0] layout (1)   [1] time, µs since the Unix epoch   [2] µs the NVML calls took   [3] of which listing processes
 *   [4] D, the number of devices; then per device, in NVML's order (nvidia-smi's numbering):
 *       used bytes (the driver's reserve included, as nvmlDeviceGetMemoryInfo counts it), free, total,
 *       reserved (NaN where the driver lacks nvmlDeviceGetMemoryInfo_v2),
 *       process status (-1: not asked; 0: listed; else NVML's error code), P, then P × (pid, used bytes or NaN)
 *
 * A sampling thread hands its samples over in another layout, NvmlBatch's (decodeNvmlBatch): rows as the
 * sample store keeps them, and the samples that listed processes apart.
 */
import type { RowListing } from './row-listings';
import type { MemorySample, ProcessMemorySample } from './samples';

export const NVML_SAMPLE_LAYOUT = 1;
/** More processes than this on one device is a malformed sample (NVML lists at most a few thousand). */
const MAX_PROCESSES_PER_DEVICE = 65_536;
/** NVML_ERROR_FUNCTION_NOT_FOUND: the driver lacks nvmlDeviceGetComputeRunningProcesses_v3. */
export const NVML_FUNCTION_NOT_FOUND = 13;

export interface DecodedNvmlSample {
  sample: MemorySample;
  /** Per device (as sample.devices): the driver's own reserve, null where not reported. */
  reservedBytes: (number | null)[];
  /** Devices whose processes NVML could not list, with its error code. */
  processErrors: { device: number; code: number }[];
  /** Time the native call spent in NVML, and of it listing processes. */
  nativeUs: number;
  processUs: number;
}

export class NvmlSampleLayoutError extends Error {
  override readonly name = 'NvmlSampleLayoutError';
}

const nonNegative = (value: number | undefined, what: string): number => {
  if (value === undefined || !Number.isFinite(value) || value < 0) throw new NvmlSampleLayoutError(`${what} is ${value}`);
  return value;
};
const count = (value: number | undefined, what: string, max: number): number => {
  const n = nonNegative(value, what);
  if (!Number.isInteger(n) || n > max) throw new NvmlSampleLayoutError(`${what} is ${value}`);
  return n;
};

/** Reads one sample; throws NvmlSampleLayoutError on anything that does not fit the layout. */
export function decodeNvmlSample(data: ArrayLike<number>): DecodedNvmlSample {
  const { sample, next } = decodeAt(data, 0);
  if (next !== data.length) throw new NvmlSampleLayoutError(`${data.length - next} values after the last device`);
  return sample;
}

interface ProcessPart {
  processes: ProcessMemorySample[] | null;
  processErrors: { device: number; code: number }[];
}

/**
 * One device's processes as both layouts carry them — status (-1: not asked; 0: listed; else NVML's error), P,
 * P × (pid, used bytes or NaN) — read from `at` into `into`; returns where the next device's part starts.
 */
function readProcessPart(data: ArrayLike<number>, at: number, index: number, into: ProcessPart): number {
  if (at + 2 > data.length) throw new NvmlSampleLayoutError(`device ${index}'s processes run past the end`);
  const status = data[at]!;
  const listed = count(data[at + 1], `device ${index}'s process count`, MAX_PROCESSES_PER_DEVICE);
  if (!Number.isInteger(status) || status < -1) throw new NvmlSampleLayoutError(`device ${index}'s process status is ${status}`);
  if (status !== 0 && listed !== 0) throw new NvmlSampleLayoutError(`device ${index} lists ${listed} processes with status ${status}`);
  at += 2;
  if (at + 2 * listed > data.length) throw new NvmlSampleLayoutError(`device ${index}'s processes run past the end`);
  if (status > 0) into.processErrors.push({ device: index, code: status });
  if (status === 0) {
    into.processes ??= [];
    for (let k = 0; k < listed; k++) {
      const pid = data[at + 2 * k]!;
      const used = data[at + 2 * k + 1]!;
      if (!Number.isInteger(pid) || pid <= 0 || pid > 0xffffffff) throw new NvmlSampleLayoutError(`device ${index} lists pid ${pid}`);
      into.processes.push({ device: index, pid, usedBytes: Number.isFinite(used) && used >= 0 ? used : null });
    }
  }
  return at + 2 * listed;
}

function decodeAt(data: ArrayLike<number>, start: number): { sample: DecodedNvmlSample; next: number } {
  if (start + 5 > data.length) throw new NvmlSampleLayoutError(`a sample's header runs past the end (${data.length} values)`);
  if (data[start] !== NVML_SAMPLE_LAYOUT) throw new NvmlSampleLayoutError(`layout ${data[start]}, expected ${NVML_SAMPLE_LAYOUT}`);
  const timeUs = nonNegative(data[start + 1], 'the time');
  const nativeUs = nonNegative(data[start + 2], 'the native time');
  const processUs = nonNegative(data[start + 3], 'the process time');
  const deviceCount = count(data[start + 4], 'the device count', 1024);
  const devices: MemorySample['devices'] = [];
  const reservedBytes: (number | null)[] = [];
  const listing: ProcessPart = { processes: null, processErrors: [] };
  let at = start + 5;
  for (let index = 0; index < deviceCount; index++) {
    if (at + 6 > data.length) throw new NvmlSampleLayoutError(`device ${index} runs past the end (${data.length} values)`);
    const usedBytes = nonNegative(data[at], `device ${index}'s used bytes`);
    const freeBytes = nonNegative(data[at + 1], `device ${index}'s free bytes`);
    const totalBytes = nonNegative(data[at + 2], `device ${index}'s total bytes`);
    const reserved = data[at + 3]!;
    devices.push({ index, usedBytes, freeBytes, totalBytes });
    reservedBytes.push(Number.isFinite(reserved) && reserved >= 0 ? reserved : null);
    at = readProcessPart(data, at + 4, index, listing);
  }
  const { processes, processErrors } = listing;
  return { sample: { sample: { timeUs, devices, processes }, reservedBytes, processErrors, nativeUs, processUs }, next: at };
}

/** What a sampling thread hands over at a take (native/src/monitor.cc; main/native/addon.ts, NvmlSamplerTake). */
export interface NvmlBatchInput {
  samples: number;
  /** Per sample: time (µs since the Unix epoch), then per device used, free and total bytes. */
  rows: Float64Array;
  /** Per sample that listed processes: its row, then per device status, P, and P × (pid, used bytes or NaN). */
  listings: Float64Array;
  /** The newest sample's driver reserve per device (NaN where the driver lacks the v2 query). */
  reserved: Float64Array;
  /** µs the NVML calls of these samples took, and of it listing processes. */
  nativeUs: number;
  processUs: number;
}

/** A sample of a batch that listed processes (or tried to). */
export interface NvmlBatchListing extends RowListing {
  processErrors: { device: number; code: number }[];
}

/**
 * A sampling thread's samples since the last take, as rows in the sample store's layout (time, then per
 * device used, free, total) and the few that listed processes apart: taken in with copies, not an object per
 * sample. `sample(i)` makes one sample's object, for the rare caller that needs it.
 */
export class NvmlBatch {
  constructor(
    readonly count: number,
    readonly deviceCount: number,
    readonly rows: Float64Array,
    readonly listings: readonly NvmlBatchListing[],
    readonly reservedBytes: (number | null)[],
    readonly nativeUs: number,
  ) {}

  /** Sample i as an object; `processes` where the caller holds its listing already (else it is looked up). */
  sample(i: number, processes: ProcessMemorySample[] | null = this.listings.find((l) => l.row === i)?.processes ?? null): MemorySample {
    const width = 1 + 3 * this.deviceCount;
    const at = i * width;
    const devices: MemorySample['devices'] = [];
    for (let j = 0; j < this.deviceCount; j++)
      devices.push({ index: j, usedBytes: this.rows[at + 1 + 3 * j]!, freeBytes: this.rows[at + 2 + 3 * j]!, totalBytes: this.rows[at + 3 + 3 * j]! });
    return { timeUs: this.rows[at]!, devices, processes };
  }
}

/** Reads a sampling thread's batch for `deviceCount` devices; throws NvmlSampleLayoutError on anything that does not fit. */
export function decodeNvmlBatch(input: NvmlBatchInput, deviceCount: number): NvmlBatch {
  const count = input.samples;
  if (!Number.isInteger(count) || count < 0) throw new NvmlSampleLayoutError(`the sample count is ${count}`);
  const width = 1 + 3 * deviceCount;
  const { rows, listings, reserved } = input;
  if (rows.length !== count * width) throw new NvmlSampleLayoutError(`${rows.length} values for ${count} samples of ${deviceCount} devices`);
  for (let i = 0; i < rows.length; i++) {
    const v = rows[i]!;
    if (!(v >= 0) || v === Infinity) throw new NvmlSampleLayoutError(`sample ${Math.floor(i / width)} holds ${v}`);
  }
  if (count > 0 && reserved.length !== deviceCount) throw new NvmlSampleLayoutError(`${reserved.length} reserves for ${deviceCount} devices`);
  const parsed: NvmlBatchListing[] = [];
  let at = 0;
  while (at < listings.length) {
    const row = listings[at]!;
    if (!Number.isInteger(row) || row < 0 || row >= count || (parsed.length && row <= parsed[parsed.length - 1]!.row))
      throw new NvmlSampleLayoutError(`a listing names sample ${row}`);
    at++;
    const listing: ProcessPart = { processes: null, processErrors: [] };
    for (let index = 0; index < deviceCount; index++) at = readProcessPart(listings, at, index, listing);
    const { processes, processErrors } = listing;
    parsed.push({ row, processes, processErrors });
  }
  const reservedBytes: (number | null)[] = [];
  for (let j = 0; j < reserved.length; j++) reservedBytes.push(Number.isFinite(reserved[j]) && reserved[j]! >= 0 ? reserved[j]! : null);
  return new NvmlBatch(count, deviceCount, rows, parsed, reservedBytes, nonNegative(input.nativeUs, 'the native time'));
}
