import { findNcu, readCounterPermission } from '../tools/nsight-compute';
import type { DiscoveryReport, LibraryReport } from '../../core/discovery';
import { findNvcc } from '../compile/nvcc';
import { loadAddon } from '../native/addon';
import { driverCandidates, nvmlCandidates, nvrtcCandidates } from '../native/library-candidates';
import { findComputeSanitizer } from '../tools/compute-sanitizer';
import { DOCTOR_ENV_VARIABLES } from '../../core/doctor/environment-rules';

const notLoaded = (error: string): LibraryReport => ({
  loaded: false,
  path: null,
  source: null,
  attempts: [{ candidate: '(native addon)', source: 'addon', error }],
  missingRequired: [],
  missingOptional: [],
});

/**
 * Finds the CUDA libraries for this process (they stay loaded) and reports what was found where. `only`: 'driver' for
 * a runner (libcuda alone); 'monitor' for what watches programs (libcuda and NVML, not NVRTC: a diagnosis or a monitor
 * compiles nothing, and NVRTC is the largest library to load and bind).
 */
export function discoverLibraries(nvrtcSetting?: string, only: 'all' | 'driver' | 'monitor' = 'all'): Omit<DiscoveryReport, 'nvcc'> {
  const addonState = loadAddon();
  const addon = { loaded: addonState.addon !== null, path: addonState.path, error: addonState.error };
  if (!addonState.addon) {
    const missing = notLoaded(`native addon not loaded: ${addonState.error}`);
    return { addon, cuda: missing, nvrtc: missing, nvml: missing, platform: `${process.platform}-${process.arch}` };
  }
  const libraries = addonState.addon.loadLibraries({
    cuda: driverCandidates(),
    nvrtc: only === 'all' ? nvrtcCandidates(nvrtcSetting) : [],
    nvml: only === 'driver' ? [] : nvmlCandidates(),
  });
  return { addon, ...libraries, platform: `${process.platform}-${process.arch}` };
}

let libraries: Omit<DiscoveryReport, 'nvcc'> | null = null;
/**
 * The libraries alone, found once per process: what listing devices needs. Not the tools: their `--version` runs
 * (ncu's takes about half a second) would be paid by every CLI command that only needs a device.
 */
export function cudaLibraries(): Omit<DiscoveryReport, 'nvcc'> {
  libraries ??= discoverLibraries();
  return libraries;
}

let cached: Promise<DiscoveryReport> | null = null;

export function discover(): Promise<DiscoveryReport> {
  cached ??= (async () => {
    const [nvcc, computeSanitizer, ncu, profilingCounters] = await Promise.all([findNvcc(), findComputeSanitizer(), findNcu(), readCounterPermission()]);
    const env = Object.fromEntries(DOCTOR_ENV_VARIABLES.flatMap((name) => (process.env[name] !== undefined ? [[name, process.env[name]!]] : [])));
    return { ...cudaLibraries(), nvcc, computeSanitizer, ncu, profilingCounters, env };
  })();
  return cached;
}
