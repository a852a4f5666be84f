import { isSticky } from '../cuda/error-catalog';
import {
  FINDING_LIMITS,
  type Dim3,
  type DeviceLocation,
  type FindingGroup,
  type HostFrame,
  type SanitizerFinding,
  type SanitizerSummary,
  type SourceMapped,
} from './findings';
import { plural, thousands } from '../format';
import { countsAreLowerBounds } from './parse-text';

/**
 * Thousands of findings from as many threads, as the few things a person fixes: one group per (tool, kind,
 * kernel, file:line, and the tool's sentence) — for races both sides' lines, for leaks and API errors the
 * user's own frame that made the call. One pass with a Map: 100,000 findings group in milliseconds.
 */

// --- the user's own host frame -------------------------------------------------------------------------------

/** Modules that are not the user's code: the driver, the CUDA runtime, libc and the loader, interpreters, Node and the workbench's addon, framework internals. */
const FOREIGN_MODULE =
  /^(?:libcuda\.so|libcudart|libcudadevrt|libnvrtc|libnvJitLink|libcublas|libcufft|libcurand|libcusparse|libcusolver|libcudnn|libnccl|libnvidia-|libc\.so|libc-|ld-linux|ld-\d|libpthread|libdl[.-]|librt[.-]|libm\.so|libstdc\+\+|libgcc_s|libpython|python\d*(?:\.\d+)*$|node$|electron$|gpu_workbench_native\.node$|libtorch|libc10|libshm)/;
/** Paths of Python packages whose compiled extensions are their own internals (cupy's `.so` files, torch/lib). */
const FOREIGN_PATH = /\/(?:cupy|cupy_backends|cupyx|torch\/lib|torch\/_C|nvidia\/[^/]+\/lib)\//;
/** Functions that are CUDA's, the C runtime's, or Node's, whatever module holds them (cudart is often linked statically). */
const FOREIGN_FUNC =
  /^(?:cu[A-Z]\w*|cuda[A-Z]\w*|__cuda\w*|__device_stub_\w*|libcudart_static_\w*|_start|__libc_start\w*|cudaError(?:_t)? cuda\w*.*|v8::.*|v8impl::.*|node::.*|Napi::.*|napi_\w*|Builtins_\w*|uv_\w*)$/;
/**
 * Code Cython generated: its runtime helpers (`__Pyx_…`), and CuPy's compiled modules (`__pyx_f_4cupy_…`,
 * `__pyx_pw_13cupy_backends_…`: Cython writes the module's name after its length). The text names only a module's
 * basename, so the function's name is what tells CuPy's `driver.cpp:8369` from a file of the user's.
 */
const CYTHON_FOREIGN = /^(?:__Pyx_\w|__pyx_[a-z]+_\d+(?:cupy|cupyx|cupy_backends)_)/;
/** A Python file of an installed package (CuPy's basic.py, PyTorch's functional.py): the library's line, not the user's. */
const INSTALLED_PYTHON = /\/(?:site|dist)-packages\/[^/]+.*\.py$/;

const basename = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/** Caches what each module and function name was found to be (the same few hundred names recur in every record). */
export interface FrameCache {
  modules: Map<string, boolean>;
  funcs: Map<string, boolean>;
}
export const frameCache = (): FrameCache => ({ modules: new Map(), funcs: new Map() });

function foreign(frame: HostFrame, kernel: string | null, cache: FrameCache): boolean {
  if (frame.module !== null) {
    let skip = cache.modules.get(frame.module);
    if (skip === undefined) {
      skip = FOREIGN_MODULE.test(basename(frame.module)) || FOREIGN_PATH.test(frame.module);
      cache.modules.set(frame.module, skip);
    }
    if (skip) return true;
  }
  if (frame.func !== null) {
    // nvcc's host stub for a kernel carries the kernel's name: it is generated, not the user's call.
    if (frame.func === kernel) return true;
    let skip = cache.funcs.get(frame.func);
    if (skip === undefined) {
      skip = FOREIGN_FUNC.test(frame.func) || CYTHON_FOREIGN.test(frame.func);
      cache.funcs.set(frame.func, skip);
    }
    if (skip) return true;
  }
  if (frame.file !== null && frame.module === null && INSTALLED_PYTHON.test(frame.file)) return true;
  return frame.func === null && frame.file === null;
}

/**
 * The first frame of the user's own code in the finding's host stack: a frame with a file and line (a Python
 * frame, `<module> in leak.py:24`) before one with a function name only; null when every frame is CUDA's,
 * the C runtime's, the interpreter's or the workbench's.
 */
export function userFrame(finding: SanitizerFinding, cache: FrameCache = frameCache()): HostFrame | null {
  const kernel = finding.hostStackAt === 'kernel launch time' ? (finding.where?.func ?? null) : null;
  let named: HostFrame | null = null;
  for (const frame of finding.hostStack) {
    if (foreign(frame, kernel, cache)) continue;
    if (frame.file !== null && frame.line !== null) return frame;
    named ??= frame;
  }
  return named;
}

/** The Python files of the user's own frames in the finding's host stack, innermost first (the launching line's file leads). */
export function userPythonFiles(finding: SanitizerFinding, cache: FrameCache = frameCache()): string[] {
  const kernel = finding.hostStackAt === 'kernel launch time' ? (finding.where?.func ?? null) : null;
  const files = finding.hostStack.filter((f) => f.file !== null && f.file.endsWith('.py') && !foreign(f, kernel, cache)).map((f) => f.file!);
  return [...new Set(files)];
}

// --- grouping ------------------------------------------------------------------------------------------------

const place = (w: DeviceLocation | null): string => (w === null ? '-' : `${w.func}@${w.path ?? ''}:${w.line ?? `pc${w.pc ?? ''}`}`);
const frameKey = (f: HostFrame | null): string =>
  f === null ? '-' : f.file !== null ? `${f.file}:${f.line ?? ''}` : `${f.module ?? ''}!${f.func ?? ''}+${f.pc ?? ''}`;

function keyOf(f: SanitizerFinding, cache: FrameCache): { key: string; frame: HostFrame | null | undefined } {
  switch (f.kind) {
    case 'leak': {
      const frame = userFrame(f, cache);
      return { key: `${f.tool}|leak|${frameKey(frame)}`, frame };
    }
    case 'api-error': {
      const frame = userFrame(f, cache);
      return { key: `${f.tool}|api|${f.api?.call ?? ''}|${f.api?.error ?? ''}|${frameKey(frame)}`, frame };
    }
    case 'race': {
      const r = f.race;
      const key = r
        ? `${f.tool}|race|${r.type ?? ''}|${r.first.access ?? ''}|${place(r.first.where)}|${r.second.access ?? ''}|${place(r.second.where)}`
        : `${f.tool}|race|${f.text}|${place(f.where)}`;
      return { key, frame: undefined };
    }
    default:
      return { key: `${f.tool}|${f.kind}|${f.text}|${f.detail ?? ''}|${place(f.where)}`, frame: undefined };
  }
}

/** A key as a group keeps it: within its limit, a long one cut and told apart from others cut at the same place by a hash of all of it. */
function keptKey(key: string): string {
  if (key.length <= FINDING_LIMITS.key) return key;
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  const hash = `#${(h >>> 0).toString(16).padStart(8, '0')}`;
  return key.slice(0, FINDING_LIMITS.key - hash.length) + hash;
}

const SEVERITY_RANK = { error: 0, warning: 1, info: 2 } as const;

interface Acc {
  group: FindingGroup;
  order: number;
  frameDone: boolean;
}

const widen = (range: { min: Dim3; max: Dim3 } | null, d: Dim3 | null): { min: Dim3; max: Dim3 } | null => {
  if (d === null) return range;
  if (range === null) return { min: { ...d }, max: { ...d } };
  const { min, max } = range;
  if (d.x < min.x) min.x = d.x;
  if (d.y < min.y) min.y = d.y;
  if (d.z < min.z) min.z = d.z;
  if (d.x > max.x) max.x = d.x;
  if (d.y > max.y) max.y = d.y;
  if (d.z > max.z) max.z = d.z;
  return range;
};

/** One group per place and kind of finding, errors first, then the most frequent. */
export function groupFindings(findings: readonly SanitizerFinding[]): FindingGroup[] {
  const cache = frameCache();
  const groups = new Map<string, Acc>();
  for (const f of findings) {
    const { key, frame } = keyOf(f, cache);
    let acc = groups.get(key);
    if (acc === undefined) {
      acc = {
        group: {
          key: keptKey(key),
          tool: f.tool,
          kind: f.kind,
          severity: f.severity,
          text: f.text,
          where: f.where,
          count: 0,
          threads: null,
          blocks: null,
          example: f,
          userFrame: frame ?? null,
          leakedBytes: 0,
          hazards: 0,
        },
        order: groups.size,
        frameDone: frame !== undefined,
      };
      groups.set(key, acc);
    }
    const g = acc.group;
    g.count++;
    if (SEVERITY_RANK[f.severity] < SEVERITY_RANK[g.severity]) g.severity = f.severity;
    g.threads = widen(g.threads, f.thread);
    g.blocks = widen(g.blocks, f.block);
    if (f.leak) g.leakedBytes += f.leak.bytes;
    if (f.race) g.hazards += f.race.hazards;
  }
  const out = [...groups.values()];
  // The launch site is looked up once per group (the first record's), not once per record.
  for (const acc of out) if (!acc.frameDone) acc.group.userFrame = userFrame(acc.group.example, cache);
  out.sort((a, b) => SEVERITY_RANK[a.group.severity] - SEVERITY_RANK[b.group.severity] || b.group.count - a.group.count || a.order - b.order);
  return out.map((a) => a.group);
}

// --- what a person reads -------------------------------------------------------------------------------------

/** How to get source lines into compute-sanitizer's findings, for each way a kernel gets compiled. */
export const LINEINFO_ADVICE =
  'Line info is missing: build the kernel with -lineinfo to see the source line (nvcc or NVRTC: -lineinfo; ' +
  'CuPy: RawKernel(code, name, options=("-lineinfo",)); PyTorch extensions: extra_cuda_cflags=["-lineinfo"]).';

/** `oob.py:20`, for a line of CuPy's copy of a kernel found in the user's Python file; the tool's own `file:line` otherwise. */
const placeText = (w: DeviceLocation, mapped: SourceMapped | null | undefined): string =>
  mapped ? `${basename(mapped.file)}:${mapped.line}` : `${basename(w.path!)}:${w.line}`;
const at = (w: DeviceLocation | null, mapped?: SourceMapped | null): string => {
  if (w === null) return '';
  if (w.path !== null && w.line !== null) return ` in ${w.func} at ${placeText(w, mapped)}`;
  return ` in ${w.func}${w.pc !== null ? ` (pc ${w.pc})` : ''}`;
};
const lineOf = (w: DeviceLocation | null, mapped?: SourceMapped | null): string =>
  w === null ? 'an unknown place' : w.path !== null && w.line !== null ? placeText(w, mapped) : `${w.func}${w.pc !== null ? `+${w.pc}` : ''}`;

const axis = (lo: number, hi: number) => (lo === hi ? String(lo) : `${lo}–${hi}`);
const dims = (r: { min: Dim3; max: Dim3 }) => `(${axis(r.min.x, r.max.x)},${axis(r.min.y, r.max.y)},${axis(r.min.z, r.max.z)})`;
const single = (r: { min: Dim3; max: Dim3 }) => r.min.x === r.max.x && r.min.y === r.max.y && r.min.z === r.max.z;

/** "32 threads (0–31,0,0) in block (0,0,0)"; "at least" when --print-limit cut some. */
function who(g: FindingGroup, lowerBound: boolean, noun = 'thread'): string {
  const n = `${lowerBound ? 'at least ' : ''}${plural(g.count, noun)}`;
  if (g.threads === null) return n;
  const blocks = g.blocks === null ? '' : ` in ${single(g.blocks) ? 'block' : 'blocks'} ${dims(g.blocks)}`;
  return `${n} ${dims(g.threads)}${blocks}`;
}

export function describeFrame(f: HostFrame): string {
  if (f.file !== null) return `${f.func ?? '?'} in ${basename(f.file)}${f.line !== null ? `:${f.line}` : ''}`;
  return `${f.func ?? '?'}${f.pc !== null ? ` (${f.pc})` : ''}${f.module !== null ? ` in ${basename(f.module)}` : ''}`;
}

/**
 * A small global address is a null pointer plus an index, whatever "nearest allocation" says (the recording of
 * 65,536 threads writing through null reached 0x3fffc). Under 16 MiB: device allocations live far above it.
 * Shared and local addresses are small offsets by nature, so only global (or unnamed) spaces count.
 */
const nullish = (access: SanitizerFinding['access']) =>
  access !== null &&
  (access.space === null || access.space === '__global__') &&
  access.address !== null &&
  /^0x[0-9a-f]+$/i.test(access.address) &&
  parseInt(access.address, 16) < 0x1000000;

const HAZARD_WORDS: Record<string, string> = { WAR: 'a write after a read', RAW: 'a read after a write', WAW: 'two writes' };
/** A sticky error, by its code where the record has one (driver and runtime share these), else by either API's name. */
export const isStickyApiError = (api: NonNullable<SanitizerFinding['api']>) =>
  api.code !== null
    ? isSticky({ code: api.code })
    : /launchfail|illegaladdress|misalignedaddress|illegalinstruction|assert|hardwarestackerror|invalidpc/.test(api.error.replace(/_/g, '').toLowerCase());

/**
 * The sentence a person reads for a group: what happened, where, how many threads in which blocks, and what
 * only the text knew (the nearest allocation). `summary`, where given, marks counts as lower bounds when
 * --print-limit cut findings.
 */
export function describeGroup(g: FindingGroup, summary?: SanitizerSummary): string {
  const lowerBound = summary !== undefined && countsAreLowerBounds(summary);
  const e = g.example;
  const noLine = g.where !== null && (g.where.path === null || g.where.line === null) ? ` ${LINEINFO_ADVICE}` : '';
  switch (g.kind) {
    case 'memory-access': {
      const a = e.access;
      const space = a?.space && a.space !== '__global__' ? ` in ${a.space.replace(/^_+|_+$/g, '')} memory` : '';
      const head =
        a?.direction != null && a.size !== null ? `Invalid ${a.direction} of ${plural(a.size, 'byte')}${space}${a.error ? ` ${a.error}` : ''}` : e.text;
      let tail = '';
      if (nullish(a)) tail = `; the address is ${a!.address}, a null pointer (or a small offset from one)`;
      else if (e.nearest !== null) {
        const n = e.nearest;
        const where = n.side === 'inside' ? 'inside' : `${plural(n.distance, 'byte')} ${n.side}`;
        tail = `; ${where} the nearest allocation (${plural(n.allocationSize, 'byte')})`;
      }
      return `${head}${at(g.where, g.sourceMapped)} — ${who(g, lowerBound)}${tail}.${noLine}`;
    }
    case 'uninitialised-read': {
      const a = e.access;
      const space = a?.space ? `${a.space.replace(/^_+|_+$/g, '')} ` : '';
      const head = a?.size != null ? `Read of ${plural(a.size, 'byte')} of uninitialised ${space}memory` : e.text;
      return `${head}${at(g.where, g.sourceMapped)} — ${who(g, lowerBound)}. Write the memory (an upload, cudaMemset, or a kernel) before this read.${noLine}`;
    }
    case 'barrier':
      return `Barrier error${e.detail ? `: ${e.detail}` : ''}${at(g.where, g.sourceMapped)} — ${who(g, lowerBound)}. Every thread of the block must reach the same __syncthreads() (none may skip it in a branch).${noLine}`;
    case 'race': {
      const r = e.race;
      if (r === null) return `${e.text}${at(g.where, g.sourceMapped)} — ${who(g, lowerBound, 'record')}.${noLine}`;
      const kind = r.type !== null ? `${r.type}, ${HAZARD_WORDS[r.type] ?? 'a hazard'}` : null;
      const side = (s: typeof r.first, mapped: SourceMapped | null | undefined) => `the ${s.access?.toLowerCase() ?? 'access'} at ${lineOf(s.where, mapped)}`;
      const hazards = `${lowerBound ? 'at least ' : ''}${plural(g.hazards, 'hazard')}`;
      const threads =
        g.threads !== null
          ? `; the first access by ${single(g.threads) ? 'thread' : 'threads'} ${dims(g.threads)}${g.blocks ? ` in ${single(g.blocks) ? 'block' : 'blocks'} ${dims(g.blocks)}` : ''}`
          : '';
      const missing = [r.first.where, r.second.where].some((w) => w !== null && (w.path === null || w.line === null)) ? ` ${LINEINFO_ADVICE}` : '';
      return (
        `Race${kind ? ` (${kind})` : ''} in ${r.first.where?.func ?? g.where?.func ?? 'a kernel'} between ${side(r.first, g.raceSourceMapped?.first)} and ${side(r.second, g.raceSourceMapped?.second)} — ${hazards}${threads}. ` +
        `A __syncthreads() between the two accesses orders them.${missing}`
      );
    }
    case 'leak': {
      const from = g.userFrame !== null ? `, allocated at ${describeFrame(g.userFrame)}` : ', allocated outside your code (see the host stack)';
      return `Leaked ${plural(g.leakedBytes, 'byte')} in ${plural(g.count, 'allocation')}${from}: nothing freed ${g.count === 1 ? 'it' : 'them'} before the program ended.`;
    }
    case 'api-error': {
      const api = e.api;
      if (api === null) return `${e.text}${g.count > 1 ? ` (${thousands(g.count)} times)` : ''}.`;
      const from = g.userFrame !== null ? `, called from ${describeFrame(g.userFrame)}` : '';
      const times = g.count > 1 ? ` (${thousands(g.count)} times)` : '';
      const why = isStickyApiError(api) ? ' This error is what a kernel fault leaves behind: fix the kernel finding first.' : '';
      return `${api.call} returned ${api.error}${api.code !== null ? ` (${api.code})` : ''}${api.message ? `: ${api.message}` : ''}${from}${times}.${why}`;
    }
    default:
      return `${e.text}${at(g.where, g.sourceMapped)} — ${who(g, lowerBound)}.${noLine}`;
  }
}

/**
 * "… and 3 API errors that followed it, because the context was dead: cudaMemcpy (cudaErrorAssert), …": the API
 * errors folded under a kernel fault (core/sanitizer/arrange-findings.ts), in one sentence; empty when none.
 */
export function describeFollowers(g: FindingGroup): string {
  const followers = g.followedBy ?? [];
  if (!followers.length) return '';
  const count = followers.reduce((n, f) => n + f.count, 0);
  const calls = [...new Set(followers.map((f) => (f.example.api ? `${f.example.api.call} (${f.example.api.error})` : f.text)))];
  const named = `${calls.slice(0, 4).join(', ')}${calls.length > 4 ? `, and ${plural(calls.length - 4, 'more call')}` : ''}`;
  return `… and ${plural(count, 'API error')} that followed it, because the context was dead: ${named}.`;
}
