import { DRIVER_RESULTS } from './driver-results.generated';
import { RUNTIME_ERRORS } from './runtime-errors.generated';

export interface CatalogEntry {
  code: number;
  /** Driver API name, e.g. CUDA_ERROR_ILLEGAL_ADDRESS. */
  name: string;
  /** The runtime API's name for the same code, e.g. cudaErrorIllegalAddress, where one exists. */
  runtimeName: string | null;
  /** The CUDA headers' description. */
  doc: string;
  /** The context is unusable after this error: only a new process recovers (ARCHITECTURE.md §1). */
  sticky: boolean;
}

/**
 * Errors after which the CUDA context is dead for the rest of the process. From the CUDA docs ("leaves
 * the process in an inconsistent state", "the context cannot be used anymore"), plus 999 (unknown),
 * which we treat as sticky because nothing proves otherwise and a fresh runner costs little.
 */
const STICKY_CODES: ReadonlySet<number> = new Set([214, 226, 700, 702, 710, 714, 715, 716, 717, 718, 719, 721, 810, 911, 999]);

const byCode = new Map<number, CatalogEntry>();
const byName = new Map<string, CatalogEntry>();
const runtimeByCode = new Map<number, { name: string; doc: string }>();
for (const r of RUNTIME_ERRORS) if (!runtimeByCode.has(r.value)) runtimeByCode.set(r.value, { name: r.name, doc: r.doc });

for (const r of DRIVER_RESULTS) {
  const runtime = runtimeByCode.get(r.value);
  const entry: CatalogEntry = {
    code: r.value,
    name: r.name,
    runtimeName: runtime?.name ?? null,
    doc: r.doc,
    sticky: STICKY_CODES.has(r.value),
  };
  if (!byCode.has(r.value)) byCode.set(r.value, entry);
  byName.set(r.name, entry);
  if (runtime) byName.set(runtime.name, entry);
}

// Runtime-API codes that have no driver-API code of the same number (cudaErrorInvalidConfiguration 9, ...).
const runtimeOnly = new Map<number, CatalogEntry>();
for (const r of RUNTIME_ERRORS) {
  if (byCode.has(r.value) || runtimeOnly.has(r.value) || r.value === 0) continue;
  const entry: CatalogEntry = { code: r.value, name: r.name, runtimeName: r.name, doc: r.doc, sticky: STICKY_CODES.has(r.value) };
  runtimeOnly.set(r.value, entry);
  byName.set(r.name, entry);
}

export function lookupCode(code: number): CatalogEntry | undefined {
  return byCode.get(code);
}

/** A runtime-API code: its own entry where the runtime numbers it differently, else the driver's. */
export function lookupRuntimeCode(code: number): CatalogEntry | undefined {
  return runtimeOnly.get(code) ?? byCode.get(code);
}

/** Accepts the driver (CUDA_ERROR_X) or the runtime (cudaErrorX) name. */
export function lookupName(name: string): CatalogEntry | undefined {
  return byName.get(name);
}

/** CUDA_ERROR_OUT_OF_MEMORY in the driver API, cudaErrorMemoryAllocation in the runtime API: the same number. */
export const CUDA_ERROR_OUT_OF_MEMORY = 2;

/**
 * The one answer to "is this CUDA's out of memory?", for a runner's error (a code is CUDA's only where its library is
 * 'cuda'), a catalog entry (no library: always CUDA's) or a name read from text (either API's).
 */
export const isOutOfMemory = (e: { code: number; name?: string; library?: string }): boolean =>
  e.name === 'CUDA_ERROR_OUT_OF_MEMORY' || e.name === 'cudaErrorMemoryAllocation' || ((e.library ?? 'cuda') === 'cuda' && e.code === CUDA_ERROR_OUT_OF_MEMORY);

/**
 * The one answer to "is this error sticky?" (the context is dead after it), for a runner's error or a catalog
 * entry, as `isOutOfMemory`: a workbench or NVRTC error with the same number is not.
 */
export const isSticky = (e: { code: number; library?: string }): boolean => (e.library ?? 'cuda') === 'cuda' && STICKY_CODES.has(e.code);
export const catalogEntries = (): CatalogEntry[] => [...byCode.values()];
