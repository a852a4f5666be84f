/**
 * What compute-sanitizer found, as the workbench holds it: one record per finding the tool printed, read
 * from its XML (`--xml --save`), with what only the text says (the nearest allocation, how many findings
 * `--print-limit` cut off) merged in. No schema is published; the shapes here follow the XML that
 * compute-sanitizer 2025.3 writes (test/fixtures/sanitizer/h100).
 */

/** Findings kept from one run, by the XML parser and the text parser alike; past it they are counted, not kept. */
export const DEFAULT_MAX_FINDINGS = 200_000;

/**
 * The most a finding keeps of each field, as a bundle's sanitizer.json allows (core/bundle/bundle-sanitizer.ts): its
 * sentence; a name or path (a demangled C++ template can run to pages); a word (a record kind, a memory space); a
 * token (an address, a pc); a hazard type; host frames; and its group's key.
 */
export const FINDING_LIMITS = { text: 65_536, name: 4096, word: 256, token: 64, hazard: 16, frames: 1024, key: 8192 } as const;

export type SanitizerTool = 'memcheck' | 'racecheck' | 'initcheck' | 'synccheck';
export const SANITIZER_TOOLS: readonly SanitizerTool[] = ['memcheck', 'racecheck', 'initcheck', 'synccheck'];

export interface Dim3 {
  x: number;
  y: number;
  z: number;
}

/** A place in device code: the kernel (or device function), and the source line when -lineinfo gave one. */
export interface DeviceLocation {
  func: string;
  /** Absent when the code was built without -lineinfo (or -G). */
  path: string | null;
  line: number | null;
  pc: string | null;
}

/** One frame of the host stack the tool saved (at launch, at the error, or at the allocation). */
export interface HostFrame {
  func: string | null;
  module: string | null;
  pc: string | null;
  /** A source file and line when the frame has one (a Python frame: `<module> in leak.py:24`). */
  file: string | null;
  line: number | null;
}

export type FindingKind =
  | 'memory-access' // memcheck: invalid read or write (out of bounds, misaligned, freed memory)
  | 'leak' // memcheck --leak-check full
  | 'api-error' // a CUDA API call returned an error
  | 'uninitialised-read' // initcheck
  | 'race' // racecheck: a hazard, or the analysis that sums hazards up
  | 'barrier' // synccheck
  | 'device-error' // a hardware exception, trap, assert, or anything else the tool reports on the device
  | 'other';

export interface SanitizerFinding {
  tool: SanitizerTool;
  kind: FindingKind;
  /** The record's own kind (Precise, Leak, Api, Initcheck, Hazard, Analysis, Synccheck, …), kept as the tool wrote it. */
  recordKind: string;
  severity: 'error' | 'warning' | 'info';
  /** The tool's own sentence (`Invalid __global__ write of size 4 bytes is out of bounds`). */
  text: string;
  where: DeviceLocation | null;
  thread: Dim3 | null;
  block: Dim3 | null;
  /** memcheck and initcheck: the access. */
  access: { direction: 'read' | 'write' | null; space: string | null; size: number | null; address: string | null; error: string | null } | null;
  /** From the text (the XML leaves it out): where the access was against the nearest allocation. */
  nearest: { allocation: string; allocationSize: number; distance: number; side: 'before' | 'after' | 'inside' } | null;
  /** Leaks: the bytes and the address; api errors: the call and its result. */
  leak: { bytes: number; address: string | null } | null;
  api: { call: string; error: string; code: number | null; message: string | null } | null;
  /**
   * racecheck: both sides of the hazard, and how many hazards the record stands for (a Hazard record is one;
   * an Analysis record sums them up). `type` is RAW, WAR or WAW: a Hazard record says it, an Analysis record's is
   * read from the order of its two accesses. `address` is the shared-memory offset (Hazard records only).
   */
  race: { type: string | null; first: RaceSide; second: RaceSide; hazards: number; address: string | null } | null;
  /** synccheck's detail (`Divergent thread(s) in warp`). */
  detail: string | null;
  /** When the host stack was saved: 'kernel launch time', 'error', 'allocation time'. */
  hostStackAt: string | null;
  hostStack: HostFrame[];
}

export interface RaceSide {
  access: string | null;
  thread: Dim3 | null;
  where: DeviceLocation | null;
}

/** What the tool said about the run as a whole, from its summary lines. */
export interface SanitizerSummary {
  /** `ERROR SUMMARY: N errors`, or the racecheck/leak summaries; null when the tool printed none. */
  errorsReported: number | null;
  /** racecheck only: `RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)` gives W. */
  warningsReported: number | null;
  /** racecheck only: the N of `N hazards displayed` (records printed, each one or many hazards). */
  hazardsDisplayed: number | null;
  /** Findings --print-limit kept out of the output (`N errors were not printed`). */
  notPrinted: number;
  /** `LEAK SUMMARY: N bytes leaked in M allocations`. */
  leakedBytes: number | null;
  leakedAllocations: number | null;
  /** `Target application returned an error`: the program itself exited with a non-zero status. */
  targetReturnedError: boolean;
  /** Lines the tool printed about itself failing (`Error: Target application terminated before first instrumented API call`). */
  toolErrors: string[];
}

/** Thousands of records from many threads, as one item per (tool, kind, kernel, file:line). */
export interface FindingGroup {
  key: string;
  tool: SanitizerTool;
  kind: FindingKind;
  severity: SanitizerFinding['severity'];
  text: string;
  where: DeviceLocation | null;
  count: number;
  /** The smallest and largest thread and block indices among the group's records (per axis). */
  threads: { min: Dim3; max: Dim3 } | null;
  blocks: { min: Dim3; max: Dim3 } | null;
  /** The first record, as the tool wrote it: its stack, its address, its nearest allocation. */
  example: SanitizerFinding;
  /** The user's own frame (not libcuda, libcudart, the interpreter or the workbench), first in the stack. */
  userFrame: HostFrame | null;
  leakedBytes: number;
  /** racecheck: the hazards the group's records stand for (an Analysis record counts many); 0 for other kinds. */
  hazards: number;
  /** For a workbench run: the example's address against the plan's buffers ("4 bytes past the end of `out` (allocated at step 2)"). */
  addressNamed?: string | null;
  /** A leak that is not the user's: memory an allocator (or the workbench) still held when the process ended (core/sanitizer/held-memory.ts). */
  heldBy?: MemoryHolder | null;
  /** The API errors that failed after this kernel fault because the context was dead, folded under it (core/sanitizer/arrange-findings.ts). */
  followedBy?: FindingGroup[];
  /** Where `where` is in the user's Python file, for a kernel CuPy compiled from source written there (`where` names CuPy's copy). */
  sourceMapped?: SourceMapped | null;
  /** The same for both sides of a race. */
  raceSourceMapped?: { first: SourceMapped | null; second: SourceMapped | null } | null;
}

/** Who still held a block the leak check reported: PyTorch's caching allocator, CuPy (its pool, or its arrays), the workbench's runner. */
export type MemoryHolder = 'pytorch-caching-allocator' | 'cupy-memory-pool' | 'cupy-arrays' | 'workbench-runner';

/** A line of CuPy's saved kernel source (`<sha>.cubin.cu`, what the tool names), found again in the user's Python file. */
export interface SourceMapped {
  /** The Python file and line. */
  file: string;
  line: number;
  /** The kernel source as the report named it (CuPy's copy), and the line there. */
  cachePath: string;
  cacheLine: number;
  /** The whole source found in the file (exact lines), or only the line's own text, once. */
  how: 'whole-source' | 'line-text';
}

/** A finding with what every record has; the parts only some kinds carry start empty, for the parser to fill. */
export function newFinding(
  base: Pick<SanitizerFinding, 'tool' | 'kind' | 'recordKind' | 'severity' | 'text' | 'where' | 'thread' | 'block' | 'hostStackAt' | 'hostStack'>,
): SanitizerFinding {
  return { ...base, access: null, nearest: null, leak: null, api: null, race: null, detail: null };
}
