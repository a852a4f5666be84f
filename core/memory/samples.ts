/**
 * Device memory sampled through NVML by the host (no CUDA context): the whole device and each process that
 * holds memory on it, at the rate the user sets. Times are microseconds since the Unix epoch, as the host's
 * clock gives them, so they line up with a run's event log (RunResult.startedAtMs).
 */

export interface DeviceMemorySample {
  index: number;
  usedBytes: number;
  freeBytes: number;
  totalBytes: number;
}

export interface ProcessMemorySample {
  device: number;
  pid: number;
  /** null where NVML cannot tell (some drivers, some containers). */
  usedBytes: number | null;
}

export interface MemorySample {
  timeUs: number;
  devices: DeviceMemorySample[];
  /** null where the driver could not list processes at this sample. */
  processes: ProcessMemorySample[] | null;
}

/**
 * Why a process holding GPU memory deserves a look:
 * - exited: it is not in this system's process table, yet NVML still counts its memory;
 * - not-visible: NVML names a PID this process cannot see (another container's PID namespace);
 * - foreign: it is alive, but nothing the user runs here (the workbench, the monitored command) started it.
 */
export type ProcessFlagKind = 'exited' | 'not-visible' | 'foreign';

export interface SampledProcess {
  pid: number;
  /** Its command line from /proc, when readable; else NVML's process name; else null. */
  command: string | null;
  flag: { kind: ProcessFlagKind; text: string; fix: string } | null;
  firstSeenUs: number;
  lastSeenUs: number;
}

export interface SampledDevice {
  index: number;
  name: string;
  uuid: string;
  totalBytes: number;
}

export interface SampleSeries {
  intervalMs: number;
  devices: SampledDevice[];
  processes: SampledProcess[];
  samples: MemorySample[];
  /** Samples left out because the series reached its bound (oldest first). */
  dropped: number;
}
