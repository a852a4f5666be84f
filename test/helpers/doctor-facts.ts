import type { DiscoveryReport, DoctorCheck, LibraryReport } from '../../core/discovery';
import { evaluateDoctor } from '../../core/doctor/evaluate';
import type { Collected, CudaDeviceFact, DoctorFacts, GpuProcessFact, NvmlDeviceHealth, NvmlField } from '../../core/doctor/facts';

/**
 * Facts built by hand for the doctor's rule tests: a healthy machine with one H100 on driver 580 (the values the
 * H100 fixture's nvidia-smi -q shows), each test changing only what its rule reads.
 */

export const ok = <T>(value: T): NvmlField<T> => ({ ok: true, value });
export const notSupported = (api: string): NvmlField<never> => ({ ok: false, code: 3, message: `${api}: Not Supported` });
export const answered = <T>(value: T, ms = 5): Collected<T> => ({ status: 'ok', ms, value });

const library = (path: string, version?: number): LibraryReport => ({
  loaded: true,
  path,
  source: 'loader path',
  ...(version ? { version } : {}),
  attempts: [{ candidate: path, source: 'loader path', error: null }],
  missingRequired: [],
  missingOptional: [],
});

export const missingLibrary = (candidate: string): LibraryReport => ({
  loaded: false,
  path: null,
  source: null,
  attempts: [{ candidate, source: 'loader path', error: `${candidate}: cannot open shared object file: No such file or directory` }],
  missingRequired: [],
  missingOptional: [],
});

export function discovery(over: Partial<DiscoveryReport> = {}): DiscoveryReport {
  return {
    addon: { loaded: true, path: '/app/native/gpu_workbench_native.node', error: null },
    cuda: library('/usr/lib/x86_64-linux-gnu/libcuda.so.1', 13000),
    nvrtc: { ...library('/usr/local/cuda/lib64/libnvrtc.so.13', 13000), supportedArchs: [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121] },
    nvml: library('/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1'),
    nvcc: { found: true, path: '/usr/local/cuda/bin/nvcc', version: 'CUDA 13.0 (V13.0.88)', searched: [] },
    computeSanitizer: { found: true, path: '/usr/local/cuda/bin/compute-sanitizer', version: '2025.3.1.0', searched: [] },
    env: {},
    platform: 'linux-x64',
    ...over,
  };
}

export function cudaDevice(ordinal: number, over: Partial<CudaDeviceFact> = {}): CudaDeviceFact {
  return {
    ordinal,
    name: 'NVIDIA H100 80GB HBM3',
    uuid: `GPU-211e0120-a03f-d321-37b8-500c399d5f3${ordinal}`,
    pciBusId: `0000:0${ordinal}:00.0`,
    computeCapability: { major: 9, minor: 0 },
    computeMode: 0,
    totalMemBytes: 85017493504,
    ...over,
  };
}

export function nvmlDevice(index: number, over: Partial<NvmlDeviceHealth> = {}): NvmlDeviceHealth {
  return {
    index,
    name: ok('NVIDIA H100 80GB HBM3'),
    uuid: ok(`GPU-211e0120-a03f-d321-37b8-500c399d5f3${index}`),
    pciBusId: ok(`00000000:0${index}:00.0`),
    persistenceMode: ok(true),
    displayActive: ok(false),
    computeMode: ok(0),
    migMode: ok({ current: 0, pending: 0 }),
    eccMode: ok({ current: true, pending: true }),
    eccErrors: { volatileCorrected: ok(0), volatileUncorrected: ok(0), aggregateCorrected: ok(0), aggregateUncorrected: ok(0) },
    retiredPages: notSupported('nvmlDeviceGetRetiredPages'),
    retiredPagesPending: notSupported('nvmlDeviceGetRetiredPagesPendingStatus'),
    remappedRows: ok({ correctable: 0, uncorrectable: 0, pending: false, failed: false }),
    clocksEventReasons: ok(0),
    ...over,
  };
}

/** Another user's live program holding 3 GiB on GPU 0. */
export function gpuProcess(pid: number, over: Partial<GpuProcessFact> = {}): GpuProcessFact {
  return {
    device: 0,
    pid,
    usedBytes: 3 * 2 ** 30,
    nvmlName: 'python3',
    liveness: 'alive',
    relation: 'other',
    listedAfterGoneUs: 0,
    ppid: 4000,
    parent: null,
    owner: { name: 'alice', mine: false },
    command: 'python3 train.py',
    ...over,
  };
}

/** A healthy machine with `n` H100s (one by default). */
/** What CUDA 13.0.88's nvcc lists, in its order, for both --list-gpu-code and --list-gpu-arch. */
export const CUDA_13_0_ARCHS = [75, 80, 86, 87, 88, 89, 90, 100, 110, 103, 120, 121];

export function facts(over: Partial<DoctorFacts> = {}, n = 1): DoctorFacts {
  const indices = [...Array(n).keys()];
  return {
    schema: 1,
    gatheredAt: '2026-11-23T14:55:13.000Z',
    limitMs: 5000,
    discovery: discovery(),
    cudaDevices: answered(indices.map((i) => cudaDevice(i))),
    nvml: answered({ driverVersion: ok('580.159.04'), cudaDriverVersion: ok(13000), devices: indices.map((i) => nvmlDevice(i)) }),
    processes: answered({
      namespace: 'initial',
      devices: indices.map((i) => ({ index: i, totalBytes: 85520809984, usedBytes: 506724352, processesListed: true })),
      processes: [],
    }),
    installations: answered({
      toolkits: [{ root: '/usr/local/cuda', realRoot: '/usr/local/cuda-13.0', version: '13.0.88', foundAs: '/usr/local' }],
      cudaHome: null,
      cudaPath: null,
      nvccRealPath: '/usr/local/cuda-13.0/bin/nvcc',
      nvrtcRealPath: '/usr/local/cuda-13.0/targets/x86_64-linux/lib/libnvrtc.so.13.0.88',
      libcudaRealPath: '/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04',
    }),
    // As CUDA 13.0.88's nvcc lists them (test/fixtures/env/nvcc-13.0/list-gpu-code.txt and list-gpu-arch.txt).
    nvccTargets: answered({ path: '/usr/local/cuda/bin/nvcc', sass: CUDA_13_0_ARCHS, ptx: CUDA_13_0_ARCHS }),
    ...over,
  };
}

/** Facts with one NVML device changed. */
export function withDevice(over: Partial<NvmlDeviceHealth>, base: DoctorFacts = facts()): DoctorFacts {
  if (base.nvml.status !== 'ok') throw new Error('withDevice needs NVML facts');
  return { ...base, nvml: answered({ ...base.nvml.value, devices: [nvmlDevice(0, over), ...base.nvml.value.devices.slice(1)] }) };
}

export const withEnv = (env: DiscoveryReport['env'], base: DoctorFacts = facts()): DoctorFacts => ({ ...base, discovery: { ...base.discovery, env } });

/** The doctor's checks by id (each id appears once). */
export function checksById(f: DoctorFacts): Record<string, DoctorCheck> {
  const checks = evaluateDoctor(f);
  const ids = checks.map((c) => c.id);
  if (new Set(ids).size !== ids.length) throw new Error(`a check id appears twice: ${ids.join(', ')}`);
  return Object.fromEntries(checks.map((c) => [c.id, c]));
}
