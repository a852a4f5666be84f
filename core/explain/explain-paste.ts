import { explanationFor, type Explanation } from '../cuda/explanations';
import { lookupCode, lookupName, lookupRuntimeCode, type CatalogEntry } from '../cuda/error-catalog';
import { formatBytes } from '../format';
import { ERROR_MESSAGES } from './error-strings.generated';
import { parseSize } from './units';

/** PyTorch's out-of-memory message, with its numbers. null where the message does not give one. */
export interface OomBreakdown {
  gpu: number | null;
  requestedBytes: number;
  totalBytes: number | null;
  freeBytes: number | null;
  allocatedByFrameworkBytes: number | null;
  reservedByFrameworkBytes: number | null;
  /** Reserved by the framework's cache but not handed out: what fragmentation and caching hold. */
  reservedUnallocatedBytes: number | null;
  /** Used on the GPU by anything but this framework's cache: other processes, the CUDA context, other libraries. */
  heldElsewhereBytes: number | null;
  /** "Including non-PyTorch memory, this process has ... in use" (PyTorch 2.1+). */
  thisProcessBytes: number | null;
  processes: { pid: number; bytes: number }[];
}

export interface SanitizerFinding {
  tool: 'memcheck' | 'racecheck' | 'initcheck' | 'synccheck' | 'unknown';
  message: string;
  accessSize: number | null;
  kernel: string | null;
  file: string | null;
  line: number | null;
  thread: string | null;
  block: string | null;
  address: string | null;
  detail: string | null;
}

export interface PasteExplanation {
  recognized: boolean;
  /** What the paste looked like. */
  source: 'pytorch-oom' | 'cupy' | 'compute-sanitizer' | 'driver-api' | 'runtime-api' | 'message' | 'unknown';
  error: CatalogEntry | null;
  title: string;
  explanation: Explanation | null;
  oom: OomBreakdown | null;
  sanitizer: SanitizerFinding[];
  /** Sentences built from the paste's own numbers and names. */
  specifics: string[];
}

// Longest first, so "an illegal memory access was encountered" wins over a shorter message inside it.
const MESSAGES_LONGEST_FIRST = [...ERROR_MESSAGES].filter((m) => m.message.length >= 8).sort((a, b) => b.message.length - a.message.length);

function result(source: PasteExplanation['source'], error: CatalogEntry | null, extra: Partial<PasteExplanation> = {}): PasteExplanation {
  return {
    recognized: true,
    source,
    error,
    title: error
      ? `${error.name} (${error.code})${error.runtimeName && error.runtimeName !== error.name ? ` — ${error.runtimeName} in the runtime API` : ''}`
      : 'CUDA error',
    explanation: explanationFor(error),
    oom: null,
    sanitizer: [],
    specifics: [],
    ...extra,
  };
}

/** A size as PyTorch and CuPy print them: 2.00 GiB, 211.13 MiB, 0 bytes. */
const SIZE = '([\\d.,]+\\s*(?:bytes|[KMGT]?i?B))';

function parsePytorchOom(text: string): OomBreakdown | null {
  const tried = new RegExp(`Tried to allocate ${SIZE}`, 'i').exec(text);
  if (!/CUDA out of memory/i.test(text) || !tried) return null;
  const size = (re: RegExp) => {
    const m = re.exec(text);
    return m ? parseSize(m[1]!) : null;
  };
  const gpu = /GPU (\d+)/.exec(text);
  // PyTorch 1.x/2.0: (GPU 0; 79.15 GiB total capacity; 75.21 GiB already allocated; 1.56 GiB free; 76.30 GiB reserved in total by PyTorch)
  // PyTorch 2.1+: GPU 0 has a total capacity of 79.15 GiB of which 3.94 MiB is free. ... Of the allocated memory 78.20 GiB is allocated by PyTorch, and 211.13 MiB is reserved by PyTorch but unallocated.
  const re = (pattern: string) => new RegExp(pattern.replace('SIZE', SIZE), 'i');
  // "total capacty" (sic) is how PyTorch 2.1 spelled it.
  const total = size(re('total capac(?:i)?ty of SIZE')) ?? size(re('SIZE total capacity'));
  const free = size(re('of which SIZE is free')) ?? size(re('SIZE free'));
  const allocated = size(re('SIZE is allocated by PyTorch')) ?? size(re('SIZE already allocated'));
  const unallocated = size(re('SIZE is reserved by PyTorch but unallocated'));
  const reservedTotal = size(re('SIZE reserved in total by PyTorch'));
  const thisProcess = size(re('this process has SIZE memory in use'));
  const reserved = reservedTotal ?? (allocated !== null && unallocated !== null ? allocated + unallocated : null);
  const processes = [...text.matchAll(new RegExp(`Process (\\d+) has ${SIZE} memory in use`, 'gi'))].map((m) => ({
    pid: Number(m[1]),
    bytes: parseSize(m[2]!) ?? 0,
  }));
  return {
    gpu: gpu ? Number(gpu[1]) : null,
    requestedBytes: parseSize(tried[1]!)!,
    totalBytes: total,
    freeBytes: free,
    allocatedByFrameworkBytes: allocated,
    reservedByFrameworkBytes: reserved,
    reservedUnallocatedBytes: unallocated ?? (reserved !== null && allocated !== null ? reserved - allocated : null),
    heldElsewhereBytes: total !== null && free !== null && reserved !== null ? Math.max(0, total - free - reserved) : null,
    thisProcessBytes: thisProcess,
    processes,
  };
}

function oomSpecifics(o: OomBreakdown): string[] {
  const f = (n: number | null) => (n === null ? '?' : formatBytes(n));
  const out = [
    `It asked for ${f(o.requestedBytes)}${o.gpu !== null ? ` on GPU ${o.gpu}` : ''}, but only ${f(o.freeBytes)} was free${o.totalBytes !== null ? ` of ${f(o.totalBytes)}` : ''}.`,
  ];
  if (o.allocatedByFrameworkBytes !== null) out.push(`PyTorch's tensors hold ${f(o.allocatedByFrameworkBytes)}.`);
  if (o.reservedUnallocatedBytes !== null) {
    const big = o.reservedUnallocatedBytes >= o.requestedBytes;
    out.push(
      `PyTorch's cache holds ${f(o.reservedUnallocatedBytes)} reserved but not in use${big ? ' — more than the request: the free space is there but fragmented. Setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True usually lets PyTorch use it.' : '.'}`,
    );
  }
  if (o.thisProcessBytes !== null && o.reservedByFrameworkBytes !== null && o.totalBytes !== null && o.freeBytes !== null) {
    const outsideCache = Math.max(0, o.thisProcessBytes - o.reservedByFrameworkBytes);
    const others = Math.max(0, o.totalBytes - o.freeBytes - o.thisProcessBytes);
    out.push(
      `This process uses ${f(o.thisProcessBytes)} in all: ${f(o.reservedByFrameworkBytes)} in PyTorch's cache and ${f(outsideCache)} outside it (the CUDA context, cuBLAS/cuDNN workspaces, other libraries).`,
    );
    if (others > 0) out.push(`Other processes hold about ${f(others)} of this GPU.`);
  } else if (o.heldElsewhereBytes !== null && o.heldElsewhereBytes > 0) {
    out.push(`${f(o.heldElsewhereBytes)} is used outside PyTorch's cache: the CUDA context, other libraries, or other processes.`);
  }
  for (const p of o.processes) out.push(`Process ${p.pid} has ${f(p.bytes)} in use.`);
  if (o.totalBytes !== null && o.requestedBytes > o.totalBytes)
    out.push(`The request alone is larger than the whole GPU (${f(o.totalBytes)}): no amount of freeing helps; look for a shape or size computed wrongly.`);
  else if (o.reservedUnallocatedBytes !== null && o.reservedUnallocatedBytes < o.requestedBytes)
    out.push('Reduce the batch size or the model, free tensors you no longer need (del, then torch.cuda.empty_cache()), or use a GPU with more memory.');
  return out;
}

const SANITIZER_HEADER =
  /^=+\s+(?:Error: |Warning: )?(Invalid __(?:global|shared|local)__ (?:read|write|atomic)[^\n]*|Uninitialized __global__ memory read[^\n]*|Race reported between[^\n]*|Barrier error[^\n]*|Misaligned [^\n]*|Malloc\/Free error[^\n]*|Out-of-range Shared or Local Address[^\n]*)$/gm;

function parseSanitizer(text: string): SanitizerFinding[] {
  const findings: SanitizerFinding[] = [];
  const headers = [...text.matchAll(SANITIZER_HEADER)];
  headers.forEach((h, i) => {
    const block = text.slice(h.index!, i + 1 < headers.length ? headers[i + 1]!.index : undefined);
    const message = h[1]!.trim();
    // "at offByOne(float *, int)+0xc0 in sanitizer_cases.cu:11" (compute-sanitizer 2025, CUDA 13)
    const at = /at ([A-Za-z_][\w:<>~]*)\([^)]*\)\+0x[0-9a-f]+ in (.+?):(\d+)/i.exec(block);
    findings.push({
      tool: /Race reported/.test(message)
        ? 'racecheck'
        : /Uninitialized/.test(message)
          ? 'initcheck'
          : /Barrier/.test(message)
            ? 'synccheck'
            : /Invalid|Misaligned|Malloc|Out-of-range/.test(message)
              ? 'memcheck'
              : 'unknown',
      message,
      accessSize: Number(/of size (\d+) bytes?/.exec(message)?.[1] ?? NaN) || null,
      kernel: at?.[1] ?? null,
      file: at?.[2]?.trim() ?? null,
      line: at ? Number(at[3]) : null,
      thread: /by thread \(([^)]*)\)/.exec(block)?.[1] ?? null,
      block: /in block \(([^)]*)\)/.exec(block)?.[1] ?? null,
      address: /(?:Access to|Address) (0x[0-9a-f]+)/i.exec(block)?.[1] ?? null,
      detail: /(is [\d,]+ bytes (?:after|before) the nearest allocation at 0x[0-9a-f]+ of size [\d,]+ bytes|\[\d+ hazards\])/i.exec(block)?.[1]?.trim() ?? null,
    });
  });
  return findings;
}

function sanitizerSpecifics(findings: SanitizerFinding[]): string[] {
  return findings.slice(0, 10).map((f) => {
    const where = f.file && f.line ? ` at ${f.file}:${f.line}` : '';
    const who = f.thread ? ` by thread (${f.thread})${f.block ? ` of block (${f.block})` : ''}` : '';
    return `${f.message}${f.kernel ? ` in ${f.kernel}` : ''}${where}${who}${f.detail ? `: ${f.detail}` : ''}.`;
  });
}

/** Recognises a pasted error in the forms users paste, and explains it. */
export function explainPaste(text: string): PasteExplanation {
  const paste = text.slice(0, 200_000);
  const oom = parsePytorchOom(paste);
  if (oom) return result('pytorch-oom', lookupCode(2) ?? null, { title: 'PyTorch: CUDA out of memory', oom, specifics: oomSpecifics(oom) });

  const sanitizer = /=+\s+(COMPUTE-SANITIZER|ERROR SUMMARY|Invalid __|Race reported|Uninitialized __global__)/.test(paste) ? parseSanitizer(paste) : [];
  if (sanitizer.length > 0) {
    const hit = /Program hit (cuda\w+|CUDA_ERROR_\w+) \(error (\d+)\)/.exec(paste);
    // A racecheck report names both accesses: "... at f()+0xc0 in k.cu:18 / and Write access at ...:16".
    const error = hit
      ? (lookupName(hit[1]!) ?? lookupRuntimeCode(Number(hit[2])) ?? null)
      : sanitizer.some((s) => s.tool === 'memcheck')
        ? (lookupCode(700) ?? null)
        : null;
    return result('compute-sanitizer', error, {
      title: `compute-sanitizer: ${sanitizer.length} finding${sanitizer.length === 1 ? '' : 's'}${error ? ` (${error.name})` : ''}`,
      sanitizer,
      specifics: sanitizerSpecifics(sanitizer),
    });
  }

  const cupyOom = /OutOfMemoryError: Out of memory allocating ([\d,]+) bytes \(allocated so far: ([\d,]+) bytes\)/.exec(paste);
  if (cupyOom) {
    const requested = Number(cupyOom[1]!.replace(/,/g, ''));
    const held = Number(cupyOom[2]!.replace(/,/g, ''));
    return result('cupy', lookupCode(2) ?? null, {
      title: 'CuPy: out of memory',
      specifics: [
        `It asked for ${formatBytes(requested)}; CuPy's memory pool already held ${formatBytes(held)}. cupy.get_default_memory_pool().free_all_blocks() returns cached blocks to the device.`,
      ],
    });
  }

  const driverName = /\b(CUDA_ERROR_[A-Z_]+)\b/.exec(paste);
  const runtimeName = /\b(cudaError[A-Za-z]+)\b/.exec(paste);
  const cupy = /CUDA(?:Runtime|Driver)Error/.test(paste);
  if (driverName || runtimeName) {
    const entry = lookupName((driverName ?? runtimeName)![1]!);
    if (entry) return result(cupy ? 'cupy' : driverName ? 'driver-api' : 'runtime-api', entry);
  }
  const numbered = /(?:error(?: code)?|code|err)\s*[=:]?\s*(\d{1,3})\b/i.exec(paste);
  const lower = paste.toLowerCase();
  for (const m of MESSAGES_LONGEST_FIRST) {
    if (lower.includes(m.message.toLowerCase())) return result('message', (m.api === 'runtime' ? lookupRuntimeCode(m.code) : lookupCode(m.code)) ?? null);
  }
  if (numbered) {
    const entry = lookupCode(Number(numbered[1])) ?? lookupRuntimeCode(Number(numbered[1]));
    if (entry) return result('message', entry);
  }
  return {
    recognized: false,
    source: 'unknown',
    error: null,
    title: 'Not recognised',
    explanation: null,
    oom: null,
    sanitizer: [],
    specifics: [
      'This does not look like a CUDA error message. Paste the full error line (for example "CUDA error: an illegal memory access was encountered", a CUDA_ERROR_* or cudaError* name, PyTorch\'s "CUDA out of memory" message, or compute-sanitizer output).',
    ],
  };
}
