import * as z from 'zod';

import type { DiscoveryReport } from '../discovery';
import { DOCTOR_ENV_VARIABLES } from './environment-rules';

/**
 * Everything the doctor's rules read, gathered by the host (main/doctor/) and nothing else: plain JSON, so the
 * rules are pure functions of it, a GPU machine's facts can be recorded (`gpu-workbench doctor --facts-out`) and
 * evaluated anywhere (`--facts`), and a bundle carries them. Read from a file, it is data from outside: the
 * schema bounds every string and list.
 */

const text = (max = 4096) => z.string().max(max);
const whole = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const ms = z.number().min(0).max(3_600_000);

/** What one NVML query answered: its value, or NVML's return code (3 = NOT_SUPPORTED, …; −1: the symbol is missing). */
export type NvmlField<T> = { ok: true; value: T } | { ok: false; code: number; message: string };
const nvmlField = <T extends z.ZodType>(value: T) =>
  z.union([z.object({ ok: z.literal(true), value }), z.object({ ok: z.literal(false), code: z.number().int(), message: text(512) })]);

/** How a collector ended: its facts, or why there are none (never a hang: each has a time limit). */
export type Collected<T> =
  | { status: 'ok'; ms: number; value: T }
  /** It did not answer within its limit (a wedged GPU or driver); the call may still be blocked. */
  | { status: 'timed-out'; limitMs: number; detail: string }
  /** It answered with an error. `error` is the structured CUDA/NVML error where there is one. */
  | { status: 'failed'; ms: number; detail: string; error: { api: string; code: number; name: string } | null }
  /** It was not asked: what it needs is missing (no driver, no NVML). */
  | { status: 'skipped'; detail: string };
const collected = <T extends z.ZodType>(value: T) =>
  z.discriminatedUnion('status', [
    z.object({ status: z.literal('ok'), ms, value }),
    z.object({ status: z.literal('timed-out'), limitMs: ms, detail: text() }),
    z.object({
      status: z.literal('failed'),
      ms,
      detail: text(),
      error: z.object({ api: text(128), code: z.number().int(), name: text(128) }).nullable(),
    }),
    z.object({ status: z.literal('skipped'), detail: text() }),
  ]);

const attempt = z.object({ candidate: text(), source: text(256), error: text().nullable() });
const library = z.object({
  loaded: z.boolean(),
  path: text().nullable(),
  source: text(256).nullable(),
  version: z.number().int().nullable().optional(),
  attempts: z.array(attempt).max(256),
  missingRequired: z.array(text(128)).max(256),
  missingOptional: z.array(text(128)).max(256),
  supportedArchs: z.array(z.number().int()).max(256).optional(),
});
const tool = z.object({ found: z.boolean(), path: text().nullable(), version: text(256).nullable(), searched: z.array(text()).max(256) });
const envSchema = z.object(Object.fromEntries(DOCTOR_ENV_VARIABLES.map((name) => [name, text(32_768).optional()]))).strict();
export const discoverySchema = z.object({
  addon: z.object({ loaded: z.boolean(), path: text(), error: text().nullable() }),
  cuda: library,
  nvrtc: library,
  nvml: library,
  nvcc: tool,
  computeSanitizer: tool.optional(),
  ncu: tool.optional(),
  profilingCounters: z.object({ restrictedToAdmins: z.boolean().nullable(), administrator: z.boolean(), source: text(256) }).optional(),
  env: envSchema.optional(),
  platform: text(64),
});

/** A device as the CUDA driver numbers it (no context): what the ordinal-order and mode rules compare with NVML. */
const cudaDevice = z.object({
  ordinal: whole,
  name: text(256),
  uuid: text(128),
  pciBusId: text(64),
  computeCapability: z.object({ major: whole, minor: whole }),
  /** CU_DEVICE_ATTRIBUTE_COMPUTE_MODE (CUcomputemode, the same values as NVML's), null where the driver lacks it. */
  computeMode: z.number().int().nullable(),
  totalMemBytes: whole,
});
export type CudaDeviceFact = z.infer<typeof cudaDevice>;

const nvmlDevice = z.object({
  /** NVML's index: nvidia-smi's numbering (PCI bus order). */
  index: whole,
  name: nvmlField(text(256)),
  uuid: nvmlField(text(128)),
  pciBusId: nvmlField(text(64)),
  persistenceMode: nvmlField(z.boolean()),
  displayActive: nvmlField(z.boolean()),
  /** nvmlComputeMode_t: 0 DEFAULT, 1 EXCLUSIVE_THREAD, 2 PROHIBITED, 3 EXCLUSIVE_PROCESS. */
  computeMode: nvmlField(z.number().int()),
  /** NVML_DEVICE_MIG_DISABLE 0, NVML_DEVICE_MIG_ENABLE 1. */
  migMode: nvmlField(z.object({ current: whole, pending: whole })),
  eccMode: nvmlField(z.object({ current: z.boolean(), pending: z.boolean() })),
  eccErrors: z.object({
    volatileCorrected: nvmlField(whole),
    volatileUncorrected: nvmlField(whole),
    aggregateCorrected: nvmlField(whole),
    aggregateUncorrected: nvmlField(whole),
  }),
  retiredPages: nvmlField(z.object({ multipleSingleBit: whole, doubleBit: whole })),
  retiredPagesPending: nvmlField(z.boolean()),
  remappedRows: nvmlField(z.object({ correctable: whole, uncorrectable: whole, pending: z.boolean(), failed: z.boolean() })),
  /** The nvmlClocksEventReason* bits active now. */
  clocksEventReasons: nvmlField(whole),
});
export type NvmlDeviceHealth = z.infer<typeof nvmlDevice>;

export const nvmlHealthSchema = z.object({
  driverVersion: nvmlField(text(96)),
  /** 1000*major + 10*minor: the CUDA version the installed kernel driver supports, as NVML (not libcuda) says. */
  cudaDriverVersion: nvmlField(z.number().int()),
  devices: z.array(nvmlDevice).max(64),
});
export type NvmlHealthFacts = z.infer<typeof nvmlHealthSchema>;

/**
 * A process NVML lists, with what /proc says about it: the facts core/memory/process-flags.ts's flagProcess
 * decides on (the monitor's rule, so the doctor and the memory timeline flag a process alike).
 */
const gpuProcess = z.object({
  /** NVML's device index. */
  device: whole,
  pid: whole,
  usedBytes: whole.nullable(),
  /** What NVML called it (nvmlSystemGetProcessName), possibly empty. */
  nvmlName: text(256),
  /** In this system's process table: running, a zombie (exited, not yet reaped), or absent. */
  liveness: z.enum(['alive', 'zombie', 'absent']),
  /** Who started it, for a live one ('target' kinds do not occur here: the doctor monitors no program). */
  relation: z.enum(['target', 'target-descendant', 'workbench', 'other']).nullable(),
  /** How long NVML kept listing it after it was seen gone (0 while it runs): a second look, EXITED_GRACE_US later. */
  listedAfterGoneUs: whole,
  /** Its parent's PID from /proc, for a live one: 1 when its parent exited and it was re-parented (or a service). */
  ppid: whole.nullable(),
  /** A zombie's parent, the one that has not reaped it. */
  parent: z.object({ pid: whole, command: text(512).nullable() }).nullable(),
  owner: z.object({ name: text(256), mine: z.boolean() }).nullable(),
  /** Its command line, bounded; left out of a redacted bundle. */
  command: text(512).nullable(),
});
export type GpuProcessFact = z.infer<typeof gpuProcess>;

export const processFactsSchema = z.object({
  /** This process's PID namespace: in a nested one (a container) a PID NVML gives may name nothing here. */
  namespace: z.enum(['initial', 'nested', 'unknown']),
  devices: z.array(z.object({ index: whole, totalBytes: whole, usedBytes: whole, processesListed: z.boolean() })).max(64),
  processes: z.array(gpuProcess).max(4096),
});
export type ProcessFacts = z.infer<typeof processFactsSchema>;

const toolkit = z.object({
  /** The folder as found (/usr/local/cuda-12.4, $CUDA_HOME, a wheel's site-packages/nvidia/cu13). */
  root: text(),
  /** The same with symbolic links resolved, null when it does not exist. */
  realRoot: text().nullable(),
  /** From version.json, the dist-info folders, or version.txt: "13.0.88"; null when none says. */
  version: text(64).nullable(),
  foundAs: z.enum(['/usr/local', 'CUDA_HOME', 'CUDA_PATH', 'python wheel']),
});
export type ToolkitFact = z.infer<typeof toolkit>;

export const installationFactsSchema = z.object({
  toolkits: z.array(toolkit).max(64),
  cudaHome: text().nullable(),
  cudaPath: text().nullable(),
  /** The compilers in use, symbolic links resolved. */
  nvccRealPath: text().nullable(),
  nvrtcRealPath: text().nullable(),
  /** The driver library in use, symbolic links resolved: its name carries its release (libcuda.so.580.159.04). */
  libcudaRealPath: text().nullable(),
});
export type InstallationFacts = z.infer<typeof installationFactsSchema>;

export const nvccTargetsSchema = z.object({
  /** The nvcc asked (discovery's). */
  path: text(),
  /** `nvcc --list-gpu-code`: the architectures it builds machine code for (90 for sm_90). */
  sass: z.array(whole).max(256),
  /** `nvcc --list-gpu-arch`: the virtual architectures it writes PTX for (90 for compute_90). */
  ptx: z.array(whole).max(256),
});
export type NvccTargets = z.infer<typeof nvccTargetsSchema>;

export const DOCTOR_FACTS_SCHEMA = 1;

export const doctorFactsSchema = z.object({
  schema: z.literal(DOCTOR_FACTS_SCHEMA),
  gatheredAt: text(64),
  /** Where these facts came from, in words ("recorded on …", "hand-written from …"). */
  note: text(1024).optional(),
  limitMs: ms,
  discovery: discoverySchema,
  cudaDevices: collected(z.array(cudaDevice).max(64)),
  nvml: collected(nvmlHealthSchema),
  processes: collected(processFactsSchema),
  installations: collected(installationFactsSchema),
  /** What nvcc builds for. Absent from facts gathered before the doctor asked: that check is then not run. */
  nvccTargets: collected(nvccTargetsSchema).optional(),
});
export type DoctorFacts = z.infer<typeof doctorFactsSchema>;

// The schema's discovery is the DiscoveryReport the library checks read: a compile-time check that they agree.
export const asDiscoveryReport = (d: DoctorFacts['discovery']): DiscoveryReport => d;
const _collectedAgrees = (c: DoctorFacts['nvml']): Collected<NvmlHealthFacts> => c;
void _collectedAgrees;

/** Facts read from a file: parsed, or every problem said (a path and a message per issue). */
export function parseDoctorFacts(value: unknown): { ok: true; facts: DoctorFacts } | { ok: false; problems: string[] } {
  const parsed = doctorFactsSchema.safeParse(value);
  if (parsed.success) return { ok: true, facts: parsed.data };
  return { ok: false, problems: parsed.error.issues.slice(0, 20).map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`) };
}

/**
 * The facts as they may leave the machine in a redacted bundle: command lines dropped (they can hold anything —
 * a token passed as an argument), process names kept. Serials are not gathered; UUIDs, paths and names go
 * through the bundle's redactor like every other string.
 */
export function shareableFacts(facts: DoctorFacts): DoctorFacts {
  if (facts.processes.status !== 'ok') return facts;
  const processes = facts.processes.value.processes.map((p) => ({ ...p, command: null, parent: p.parent && { ...p.parent, command: null } }));
  return { ...facts, processes: { ...facts.processes, value: { ...facts.processes.value, processes } } };
}
