import { searched, type Problem } from '../../core/discovery';
import { decodeNvmlSample, type DecodedNvmlSample } from '../../core/memory/nvml-sample-layout';
import type { SampledDevice } from '../../core/memory/samples';
import { loadAddon, type NativeAddon, type NvmlSamplerTake } from '../native/addon';
import { toCudaError } from '../runner/cuda-error';
import { discoverLibraries } from '../services/discovery-service';

/** Monitoring cannot start: no addon, no NVML, or NVML refuses. `problem` says what to do. */
export class NvmlUnavailableError extends Error {
  override readonly name = 'NvmlUnavailableError';
  constructor(readonly problem: Problem) {
    super(`${problem.title}: ${problem.detail}`);
  }
}

/**
 * How samples are taken:
 * - 'thread' (the default): a native thread of its own samples on the monotonic clock into a buffer the JS
 *   thread drains once a second (BATCH_MS) — no JS wake-up per sample (a bare 100 Hz JS timer alone cost 1.4% of
 *   a core in the development VM), samples on time while the host is busy, and a wedged driver blocks that
 *   thread only;
 * - 'worker': a JS timer, and each NVML call on a libuv thread (the event loop runs on if the driver wedges);
 * - 'inline': a JS timer, and each call on the JS thread (no thread hop, but a wedged driver freezes the host).
 * bench/nvml-sampling.ts measures all three.
 */
export type SampleMode = 'thread' | 'worker' | 'inline';

/** A native sampling thread (mode 'thread'). */
export interface SamplingThread {
  take(): NvmlSamplerTake;
  stop(): void;
}

/**
 * One NVML call in flight in the whole host, whichever session asked: a wedged driver then holds one libuv
 * thread (of four), not all of them (file reads and the rest share that pool). A session whose tick finds
 * a call in flight skips that tick.
 */
let inFlightSince: number | null = null;

export interface NvmlSource {
  readonly driverVersion: string;
  readonly devices: SampledDevice[];
  readonly mode: SampleMode;
  /** When the call in flight (any session's) began (performance.now() ms), or null. */
  inFlightSince(): number | null;
  /** One sample; null when another call is still in flight (the tick is skipped). Rejects with NVML's error. */
  take(includeProcesses: boolean): Promise<DecodedNvmlSample | null>;
  /** NVML's name for a process, or null. */
  processName(pid: number): Promise<string | null>;
  /** Starts a native sampling thread (processEvery: list processes every n-th sample; 0: never). Throws NVML's error. */
  startThread(intervalMs: number, processEvery: number): SamplingThread;
}

function unavailable(title: string, detail: string, remedy: string, searchedIn?: string[]): NvmlUnavailableError {
  return new NvmlUnavailableError({ title, detail, remedy, ...(searchedIn ? { searched: searchedIn } : {}) });
}

/**
 * Loads NVML (once per process), names the devices and takes one sample to prove it answers. Throws
 * NvmlUnavailableError with what to do when it cannot: monitoring without NVML has nothing to show.
 */
export async function openNvmlSource(mode: SampleMode = 'thread'): Promise<NvmlSource> {
  const report = discoverLibraries(undefined, 'monitor');
  const addon: NativeAddon | null = loadAddon().addon;
  if (!report.addon.loaded || !addon)
    throw unavailable(
      'The native addon is not built',
      `Could not load ${report.addon.path}: ${report.addon.error ?? 'unknown error'}`,
      'Run `npm ci` (or `npm run build`) to build it; it needs g++ and cmake, not CUDA.',
    );
  if (!report.nvml.loaded)
    throw unavailable(
      'NVML was not found, so there is nothing to monitor',
      'libnvidia-ml.so.1, which the NVIDIA driver installs, was not found in any of the places searched.',
      'Monitoring needs a machine with the NVIDIA driver (check `nvidia-smi`). In a container, start it with the GPU exposed (`docker run --gpus all`, which mounts the driver’s libraries).',
      searched(report.nvml),
    );
  let snapshot;
  try {
    snapshot = await addon.nvmlSnapshot();
    decodeNvmlSample(await addon.nvmlSample(false));
  } catch (error) {
    const e = toCudaError(error, 'nvmlInit_v2');
    throw unavailable(
      'NVML is installed but does not answer',
      `${e.api} returned ${e.name}: ${e.message}`,
      'Check `nvidia-smi`: a driver whose kernel module and user-space library differ in version (after an update without a reboot) is a common cause, and so is a GPU that has fallen off the bus (see `dmesg` for Xid errors).',
    );
  }
  const devices: SampledDevice[] = snapshot.devices.map((d) => ({
    index: d.index,
    name: d.name || `GPU ${d.index}`,
    uuid: d.uuid,
    totalBytes: d.memory.totalBytes,
  }));
  return {
    driverVersion: snapshot.driverVersion,
    devices,
    mode,
    inFlightSince: () => inFlightSince,
    take: async (includeProcesses) => {
      if (inFlightSince !== null) return null;
      inFlightSince = performance.now();
      try {
        const data = mode === 'inline' ? addon.nvmlSampleSync(includeProcesses) : await addon.nvmlSample(includeProcesses);
        return decodeNvmlSample(data);
      } finally {
        inFlightSince = null;
      }
    },
    processName: (pid) => addon.nvmlProcessName(pid).catch(() => null),
    startThread: (intervalMs, processEvery) => {
      const id = addon.nvmlSamplerStart(intervalMs, processEvery);
      let stopped = false;
      return {
        take: () => addon.nvmlSamplerTake(id),
        stop: () => {
          if (!stopped) addon.nvmlSamplerStop(id);
          stopped = true;
        },
      };
    },
  };
}
