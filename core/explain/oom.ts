import { formatBytes } from '../format';
import { parseSize } from './units';

/**
 * Why the allocation failed, as far as the message's numbers tell:
 * - request-larger-than-gpu / request-most-of-gpu: the request alone is more than the GPU, or most of it;
 *   no allocator setting helps, the data or the operation must shrink.
 * - fragmentation: free memory plus the cache's unused memory covers the request.
 * - memory-fraction: a limit the program set (per-process fraction, CuPy's pool limit) is what it hit.
 * - other-process: even with all of this process's memory freed it would not fit beside the others.
 * - this-process: this process's own allocations are what must shrink.
 * - request-alone: the allocator held nothing; the request on its own did not fit in what was free.
 */
export type OomCause =
  'request-larger-than-gpu' | 'request-most-of-gpu' | 'fragmentation' | 'memory-fraction' | 'other-process' | 'this-process' | 'request-alone' | 'unknown';

export interface MemoryHolder {
  who: 'this-process' | 'other-process';
  /** null for this process (its PID is not in the message) or for other processes taken together. */
  pid: number | null;
  bytes: number;
}

/** An out-of-memory message, with its numbers. null where the message does not give one. */
export interface OomBreakdown {
  framework: 'pytorch' | 'cupy';
  gpu: number | null;
  requestedBytes: number;
  totalBytes: number | null;
  freeBytes: number | null;
  allocatedByFrameworkBytes: number | null;
  /** PyTorch: its cache in all. CuPy: what its memory pool held from the device ("allocated so far"). */
  reservedByFrameworkBytes: number | null;
  /** Reserved by the framework's cache but not handed out: what fragmentation and caching hold. */
  reservedUnallocatedBytes: number | null;
  /** Used on the GPU by anything but this framework's cache: other processes, the CUDA context, other libraries. */
  heldElsewhereBytes: number | null;
  /** "Including non-PyTorch memory, this process has ... in use" (PyTorch 2.1+). */
  thisProcessBytes: number | null;
  processes: { pid: number; bytes: number }[];
  /** PyTorch's "N allowed" (torch.cuda.set_per_process_memory_fraction), CuPy's "limit set to" (MemoryPool.set_limit). */
  allowedBytes: number | null;
  /** Other processes on this GPU: total − free − this process where known, else the sum of those listed. */
  otherProcessesBytes: number | null;
  /** What the request ran into: the GPU's free memory, or the limit the program set. */
  hit: 'free-memory' | 'allowed-limit' | null;
  cause: OomCause;
  /** Who holds the most of this GPU; null when nobody holds a sizeable part. */
  bigHolder: MemoryHolder | null;
}

type Measured = Omit<OomBreakdown, 'hit' | 'cause' | 'bigHolder' | 'otherProcessesBytes'>;

const GiB = 1024 ** 3;
/** A request above this share of the GPU is one no allocator setting can place. */
const MOST_OF_GPU = 0.6;
/** A holder below this share of the GPU (or of the allowed limit) is not worth naming. */
const SIZEABLE = 0.05;
/** What a process's CUDA context and library workspaces add to its allocator's cache, at most. */
const CONTEXT_OVERHEAD = 3 * GiB;

const f = (n: number | null) => (n === null ? '?' : formatBytes(n));
const name = (o: { framework: OomBreakdown['framework'] }) => (o.framework === 'pytorch' ? 'PyTorch' : 'CuPy');

/** A size as PyTorch and CuPy print them: 2.00 GiB, 211.13 MiB, 0 bytes. */
const SIZE = '([\\d.,]+\\s*(?:bytes|[KMGT]?i?B))';

function sizeAfter(text: string, pattern: string): number | null {
  const m = new RegExp(pattern.replace('SIZE', SIZE), 'i').exec(text);
  return m ? parseSize(m[1]!) : null;
}

// PyTorch 1.x/2.0: (GPU 0; 79.15 GiB total capacity; 75.21 GiB already allocated; 1.56 GiB free; 76.30 GiB reserved in total by PyTorch)
// PyTorch 2.1+: GPU 0 has a total capacity of 79.15 GiB of which 3.94 MiB is free. [Process N has X memory in use.] Including non-PyTorch
// memory, this process has X memory in use. [1.58 GiB allowed;] Of the allocated memory 78.20 GiB is allocated by PyTorch, and 211.13 MiB is
// reserved by PyTorch but unallocated.
export function parsePytorchOom(text: string): OomBreakdown | null {
  const tried = new RegExp(`Tried to allocate ${SIZE}`, 'i').exec(text);
  if (!/CUDA out of memory/i.test(text) || !tried) return null;
  const gpu = /GPU (\d+)/.exec(text);
  // "total capacty" (sic) is how PyTorch 2.1 spelled it.
  const total = sizeAfter(text, 'total capac(?:i)?ty of SIZE') ?? sizeAfter(text, 'SIZE total capacity');
  const free = sizeAfter(text, 'of which SIZE is free') ?? sizeAfter(text, 'SIZE free');
  const allocated = sizeAfter(text, 'SIZE is allocated by PyTorch') ?? sizeAfter(text, 'SIZE already allocated');
  const unallocated = sizeAfter(text, 'SIZE is reserved by PyTorch but unallocated');
  const reserved = sizeAfter(text, 'SIZE reserved in total by PyTorch') ?? (allocated !== null && unallocated !== null ? allocated + unallocated : null);
  return assess({
    framework: 'pytorch',
    gpu: gpu ? Number(gpu[1]) : null,
    requestedBytes: parseSize(tried[1]!)!,
    totalBytes: total,
    freeBytes: free,
    allocatedByFrameworkBytes: allocated,
    reservedByFrameworkBytes: reserved,
    reservedUnallocatedBytes: unallocated ?? (reserved !== null && allocated !== null ? reserved - allocated : null),
    heldElsewhereBytes: total !== null && free !== null && reserved !== null ? Math.max(0, total - free - reserved) : null,
    thisProcessBytes: sizeAfter(text, 'this process has SIZE memory in use'),
    processes: [...text.matchAll(new RegExp(`Process (\\d+) has ${SIZE} memory in use`, 'gi'))].map((m) => ({
      pid: Number(m[1]),
      bytes: parseSize(m[2]!) ?? 0,
    })),
    allowedBytes: sizeAfter(text, 'SIZE allowed;'),
  });
}

const bytesOf = (digits: string) => Number(digits.replace(/,/g, ''));

/** cupy.cuda.memory.OutOfMemoryError: Out of memory allocating N bytes (allocated so far: M bytes[, limit set to: L bytes]). */
export function parseCupyOom(text: string): OomBreakdown | null {
  const m = /Out of memory allocating ([\d,]+) bytes(?: \(allocated so far: ([\d,]+) bytes(?:, limit set to: ([\d,]+) bytes)?\))?/.exec(text);
  if (!m) return null;
  return assess({
    framework: 'cupy',
    gpu: null,
    requestedBytes: bytesOf(m[1]!),
    totalBytes: null,
    freeBytes: null,
    allocatedByFrameworkBytes: null,
    reservedByFrameworkBytes: m[2] ? bytesOf(m[2]) : null,
    reservedUnallocatedBytes: null,
    heldElsewhereBytes: null,
    thisProcessBytes: null,
    processes: [],
    allowedBytes: m[3] ? bytesOf(m[3]) : null,
  });
}

/**
 * Inside a container NVML reports host PIDs, so PyTorch cannot tell its own process among those it lists and
 * prints no "this process" line: a listed process holding PyTorch's cache plus a context's worth is this one.
 */
function listedSelf(o: Measured): { pid: number; bytes: number } | null {
  const reserved = o.reservedByFrameworkBytes;
  if (o.framework !== 'pytorch' || o.thisProcessBytes !== null || reserved === null) return null;
  return o.processes.find((p) => p.bytes >= reserved && p.bytes - reserved <= CONTEXT_OVERHEAD) ?? null;
}

/** What this process holds, as far as the message says: PyTorch's own count, the listed self, or the allocator's cache. */
function thisProcessHolds(o: Measured): number | null {
  return o.thisProcessBytes ?? listedSelf(o)?.bytes ?? o.reservedByFrameworkBytes;
}

function otherProcesses(o: Measured): number | null {
  const self = listedSelf(o);
  const mine = o.thisProcessBytes ?? self?.bytes ?? null;
  if (o.totalBytes !== null && o.freeBytes !== null && mine !== null) return Math.max(0, o.totalBytes - o.freeBytes - mine);
  const listed = o.processes.filter((p) => p !== self);
  return listed.length > 0 ? listed.reduce((sum, p) => sum + p.bytes, 0) : null;
}

function hitLimit(o: Measured): OomBreakdown['hit'] {
  const held = o.reservedByFrameworkBytes;
  if (o.allowedBytes !== null && held !== null && held + o.requestedBytes > o.allowedBytes) return 'allowed-limit';
  return o.freeBytes !== null || o.framework === 'cupy' ? 'free-memory' : null;
}

/** Room left before the request ran into what it hit: free memory, or what is left of the allowed limit. */
function headroom(o: Pick<OomBreakdown, 'hit' | 'allowedBytes' | 'reservedByFrameworkBytes' | 'freeBytes'>): number | null {
  if (o.hit === 'allowed-limit') return Math.max(0, o.allowedBytes! - (o.reservedByFrameworkBytes ?? 0));
  return o.freeBytes;
}

function biggestHolder(o: Measured, others: number | null): MemoryHolder | null {
  const self = listedSelf(o);
  const mine = thisProcessHolds(o);
  const candidates: MemoryHolder[] = o.processes.filter((p) => p !== self).map((p) => ({ who: 'other-process', pid: p.pid, bytes: p.bytes }));
  if (candidates.length === 0 && others !== null) candidates.push({ who: 'other-process', pid: null, bytes: others });
  if (mine !== null) candidates.push({ who: 'this-process', pid: self?.pid ?? null, bytes: mine });
  const top = candidates.sort((a, b) => b.bytes - a.bytes)[0];
  const scale = o.allowedBytes ?? o.totalBytes ?? o.requestedBytes;
  return top && top.bytes >= SIZEABLE * scale ? top : null;
}

function causeOf(o: Omit<OomBreakdown, 'cause'>): OomCause {
  const { requestedBytes: request, totalBytes: total } = o;
  if (total !== null && request > total) return 'request-larger-than-gpu';
  if (total !== null && request > MOST_OF_GPU * total) return 'request-most-of-gpu';
  const room = headroom(o);
  if (room !== null && o.reservedUnallocatedBytes !== null && room + o.reservedUnallocatedBytes >= request) return 'fragmentation';
  if (o.hit === 'allowed-limit') return 'memory-fraction';
  if (total !== null && o.otherProcessesBytes !== null && request > total - o.otherProcessesBytes) return 'other-process';
  const mine = thisProcessHolds(o);
  if (o.framework === 'cupy' && mine === 0) return 'request-alone';
  if (mine !== null && (o.framework === 'pytorch' || mine >= request)) return 'this-process';
  return 'unknown';
}

function assess(o: Measured): OomBreakdown {
  const otherProcessesBytes = otherProcesses(o);
  const partial = { ...o, otherProcessesBytes, hit: hitLimit(o), bigHolder: biggestHolder(o, otherProcessesBytes) };
  return { ...partial, cause: causeOf(partial) };
}

/** How a size compares with a whole, in words: "2.5×" above it, "83%" below. */
const share = (part: number, whole: number) => (part > whole ? `${(part / whole).toFixed(1)}×` : `${Math.round((100 * part) / whole)}%`);

function requestLine(o: OomBreakdown): string {
  const on = o.gpu !== null ? ` on GPU ${o.gpu}` : '';
  if (o.hit === 'allowed-limit' && o.freeBytes !== null && o.freeBytes >= o.requestedBytes)
    return `It asked for ${f(o.requestedBytes)}${on}, and ${f(o.freeBytes)} of ${f(o.totalBytes)} was free: the GPU had room.`;
  return `It asked for ${f(o.requestedBytes)}${on}, but only ${f(o.freeBytes)} was free${o.totalBytes !== null ? ` of ${f(o.totalBytes)}` : ''}.`;
}

function limitLine(o: OomBreakdown): string | null {
  if (o.hit !== 'allowed-limit') return null;
  const held = o.reservedByFrameworkBytes!;
  const setter = o.framework === 'pytorch' ? 'torch.cuda.set_per_process_memory_fraction' : 'MemoryPool.set_limit or CUPY_GPU_MEMORY_LIMIT';
  return `${f(held + o.requestedBytes)} (${f(held)} that ${name(o)} holds + ${f(o.requestedBytes)} asked for) is over the ${f(o.allowedBytes)} allowed (set with ${setter}): the limit, not the GPU's free memory, is what the request hit.`;
}

function holdingsLine(o: OomBreakdown): string | null {
  if (o.allocatedByFrameworkBytes === null) return null;
  const unused = o.reservedUnallocatedBytes;
  if (o.allocatedByFrameworkBytes === 0 && !unused) return `PyTorch itself holds nothing yet: no tensors, no cached memory.`;
  const cache = unused === null ? '' : unused === 0 ? '; its cache holds nothing beyond them' : `; its cache holds another ${f(unused)} reserved but unused`;
  return `PyTorch's tensors hold ${f(o.allocatedByFrameworkBytes)}${cache}.`;
}

function processLines(o: OomBreakdown): string[] {
  const out: string[] = [];
  const self = listedSelf(o);
  if (o.thisProcessBytes !== null && o.reservedByFrameworkBytes !== null) {
    const outsideCache = Math.max(0, o.thisProcessBytes - o.reservedByFrameworkBytes);
    out.push(
      `This process uses ${f(o.thisProcessBytes)} in all: ${f(o.reservedByFrameworkBytes)} in PyTorch's cache and ${f(outsideCache)} outside it (the CUDA context, cuBLAS/cuDNN workspaces, other libraries).`,
    );
  } else if (o.otherProcessesBytes === null && o.heldElsewhereBytes !== null && o.heldElsewhereBytes > 0) {
    out.push(`${f(o.heldElsewhereBytes)} is used outside PyTorch's cache: the CUDA context, other libraries, or other processes.`);
  }
  for (const p of o.processes) out.push(`Process ${p.pid} has ${f(p.bytes)} in use.`);
  if (self)
    out.push(
      `Process ${self.pid} holds about PyTorch's ${f(o.reservedByFrameworkBytes)} cache plus a CUDA context: it is most likely this process, listed under its host PID (inside a container PyTorch cannot match it to its own).`,
    );
  if (
    o.processes.length === 0 &&
    o.thisProcessBytes !== null &&
    o.otherProcessesBytes !== null &&
    o.otherProcessesBytes >= SIZEABLE * (o.totalBytes ?? Infinity)
  )
    out.push(`Other processes hold about ${f(o.otherProcessesBytes)} of this GPU.`);
  return out;
}

function bigHolderLine(o: OomBreakdown): string | null {
  const h = o.bigHolder;
  if (!h) return null;
  if (h.who === 'this-process') {
    const tensors = o.allocatedByFrameworkBytes;
    const inTensors = tensors !== null && o.framework === 'pytorch' ? `, ${f(tensors)} of it in tensors` : o.framework === 'cupy' ? ` in CuPy's pool` : '';
    return `The big holder is this process itself: ${f(h.bytes)}${inTensors}.`;
  }
  const mine = thisProcessHolds(o);
  const who = h.pid !== null ? `process ${h.pid}` : 'other processes';
  return `The big holder is another process: ${who} with ${f(h.bytes)}${mine !== null ? `, while this process has only ${f(mine)}` : ''}.`;
}

const SHRINK =
  'Shrink the data or the operation: a smaller batch or sequence length, a smaller dtype (bfloat16 or float16 halve float32), or the work done in chunks.';

function tooLargeLine(o: OomBreakdown): string {
  const total = o.totalBytes!;
  const size =
    o.cause === 'request-larger-than-gpu'
      ? `The request alone is larger than the whole GPU (${share(o.requestedBytes, total)} its ${f(total)})`
      : `The request alone is ${share(o.requestedBytes, total)} of the whole GPU (${f(total)})`;
  const larger = o.cause === 'request-larger-than-gpu';
  const verdict = larger
    ? 'no allocator setting and no amount of freeing helps'
    : 'no allocator setting helps, and it would fit only with almost nothing else on the GPU';
  const wrongShape = larger ? ' A request this size often comes from a shape computed wrongly (an unintended broadcast, an N×N intermediate).' : '';
  return `${size}: ${verdict}. ${SHRINK}${wrongShape}`;
}

const EXPANDABLE_WHY =
  'PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True fixes this: instead of fixed-size segments from cudaMalloc, each of which can be split but never merged with another, the allocator maps physical memory into a segment that grows as needed and can unmap free pages and map them where they are needed, so the free space becomes usable.';

function fragmentationLine(o: OomBreakdown): string {
  const unused = o.reservedUnallocatedBytes!;
  const room = headroom(o)!;
  const within =
    o.hit === 'allowed-limit' ? `Within the ${f(o.allowedBytes)} allowed, ${name(o)}'s cache holds` : `Free memory (${f(room)}) plus what the cache holds`;
  const sum = o.hit === 'allowed-limit' ? `${f(unused)} reserved but unused` : `unused (${f(unused)}) come to ${f(room + unused)}`;
  return (
    `${within} ${sum}, enough for the ${f(o.requestedBytes)} asked for: the memory is there, but fragmented. ` +
    'Before raising, PyTorch had already released the wholly free segments of its cache and retried; what is left unused lies in segments that live tensors also occupy, in pieces each smaller than the request. ' +
    EXPANDABLE_WHY
  );
}

function thinMarginLine(o: OomBreakdown): string | null {
  const room = headroom(o);
  const scale = o.allowedBytes ?? o.totalBytes;
  if (room === null || scale === null || o.reservedUnallocatedBytes === null) return null;
  const spare = room + o.reservedUnallocatedBytes - o.requestedBytes;
  if (spare >= SIZEABLE * scale) return null;
  return `Even defragmented it would only just fit (${f(spare)} to spare): Reduce the batch size or free tensors to leave headroom for the next allocation.`;
}

function memoryFractionLine(o: OomBreakdown): string {
  return `Raise the limit (${o.framework === 'pytorch' ? 'torch.cuda.set_per_process_memory_fraction' : 'cupy.get_default_memory_pool().set_limit'}) if the GPU has room, or make this process hold less.`;
}

function otherProcessLine(o: OomBreakdown): string {
  const reachable = o.totalBytes! - o.otherProcessesBytes!;
  const holder = o.bigHolder?.who === 'other-process' && o.bigHolder.pid !== null ? `process ${o.bigHolder.pid}` : 'the other processes';
  return (
    `Even if this process freed everything it has, at most ${f(reachable)} (${f(o.totalBytes)} total − ${f(o.otherProcessesBytes)} held by other processes) could be had — less than the ${f(o.requestedBytes)} asked for. ` +
    `Nothing inside this process can fix it: stop or shrink ${holder} (nvidia-smi shows what it is), wait for it to finish, or run on another GPU (CUDA_VISIBLE_DEVICES).`
  );
}

function thisProcessLine(o: OomBreakdown): string {
  const room = headroom(o);
  const unused = o.reservedUnallocatedBytes ?? 0;
  const short =
    room !== null
      ? `Free memory and the cache's unused memory together (${f(room)} + ${f(unused)}) fall ${f(o.requestedBytes - room - unused)} short of the ${f(o.requestedBytes)} asked for: this process must hold less. `
      : '';
  return `${short}Reduce the batch size or the model, free tensors you no longer need (del them, and drop references kept in lists or in the autograd graph, e.g. a loss kept for logging instead of loss.item()), then torch.cuda.empty_cache(); mixed precision, activation checkpointing or working in chunks also cut the peak.`;
}

function pytorchCauseLines(o: OomBreakdown): string[] {
  switch (o.cause) {
    case 'request-larger-than-gpu':
    case 'request-most-of-gpu':
      return [tooLargeLine(o)];
    case 'fragmentation':
      return [fragmentationLine(o), o.hit === 'allowed-limit' ? memoryFractionLine(o) : null, thinMarginLine(o)].filter((s): s is string => s !== null);
    case 'memory-fraction':
      return [memoryFractionLine(o)];
    case 'other-process':
      return [otherProcessLine(o)];
    case 'this-process':
      return [thisProcessLine(o)];
    default:
      return [];
  }
}

/** PyTorch's out of memory, explained from its own numbers. */
export function pytorchOomSpecifics(o: OomBreakdown): string[] {
  return [requestLine(o), limitLine(o), holdingsLine(o), ...processLines(o), bigHolderLine(o), ...pytorchCauseLines(o)].filter((s): s is string => s !== null);
}

const CUPY_RETRIED =
  "Before raising, CuPy had already returned its pool's cached free blocks (free_all_blocks()), run gc.collect() and retried, so calling cupy.get_default_memory_pool().free_all_blocks() yourself will not make this allocation fit; it does hand cached memory back for other libraries in the process, such as PyTorch.";

function cupyHeldLine(o: OomBreakdown): string | null {
  const held = o.reservedByFrameworkBytes;
  if (held === null) return null;
  if (held === 0) return `The pool held nothing, so this single ${f(o.requestedBytes)} request did not fit, on its own, in what the GPU had free.`;
  if (held >= o.requestedBytes)
    return `The pool held more than the request: the big holder is this process's own CuPy arrays. What the pool still held after freeing its cache is arrays your program references: del those you no longer need (a view or a slice keeps its whole base array alive), or work in chunks; pool.used_bytes() and pool.total_bytes() show in use against cached.`;
  return `The pool held less than the request, so even freeing all of it would not make room unless the GPU had ${f(o.requestedBytes - held)} more free.`;
}

function cupyUnknownLine(o: OomBreakdown): string {
  const held = o.reservedByFrameworkBytes ?? 0;
  const atOnce = held > 0 ? `${f(o.requestedBytes + held)} (the request plus what the pool held)` : f(o.requestedBytes);
  return (
    "The message gives neither the GPU's total nor its free memory, so it cannot tell whether another process, or another library in this process (PyTorch's cache, for one), holds the rest: " +
    `print cupy.cuda.runtime.memGetInfo() (free and total, in bytes) where it fails, or watch nvidia-smi. If the total is below ${atOnce}, it can never all be resident at once, and no setting helps: shrink the data (dtype, chunks).`
  );
}

/** CuPy's out of memory: the request against its pool, and what the message cannot tell. */
export function cupyOomSpecifics(o: OomBreakdown): string[] {
  const lines = [
    `It asked for ${f(o.requestedBytes)}; CuPy's memory pool already held ${f(o.reservedByFrameworkBytes ?? 0)}.`,
    limitLine(o),
    o.hit === 'allowed-limit' ? `CuPy did not ask the GPU at all. ${memoryFractionLine(o)}` : CUPY_RETRIED,
    o.hit === 'allowed-limit' ? null : cupyHeldLine(o),
    o.hit === 'allowed-limit' ? null : cupyUnknownLine(o),
  ];
  return lines.filter((s): s is string => s !== null);
}

/** cudaMalloc / cuMemAlloc out of memory: a message without numbers, so what to measure and why it is recoverable. */
export function rawOomSpecifics(text: string): string[] {
  const api = /\b(cu(?:da)?Mem\w*|cudaMalloc\w*|cuMemAlloc\w*)\b/.exec(text)?.[1] ?? 'The allocation';
  return [
    `${api} returned out of memory, and the message gives no sizes, so the arithmetic cannot be done from it: print cudaMemGetInfo() just before the call (from Python: torch.cuda.mem_get_info() or cupy.cuda.runtime.memGetInfo()) or watch nvidia-smi, and compare with the size passed. A size computed wrongly — a negative int turned into a huge size_t — fails the same way.`,
    'This error is not sticky: the CUDA context still works, so the program can free memory and retry. If PyTorch or CuPy run in the same process, their caches keep freed memory that cudaMalloc cannot use: torch.cuda.empty_cache() and cupy.get_default_memory_pool().free_all_blocks() hand it back.',
  ];
}
