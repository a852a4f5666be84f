import { explanationFor, type Explanation } from '../cuda/explanations';
import { CUDA_ERROR_OUT_OF_MEMORY, isOutOfMemory, lookupCode, lookupName, lookupRuntimeCode, type CatalogEntry } from '../cuda/error-catalog';
import { ERROR_MESSAGES } from './error-strings.generated';
import { cupyOomSpecifics, parseCupyOom, parsePytorchOom, pytorchOomSpecifics, rawOomSpecifics, type OomBreakdown } from './oom';
import { parseDeviceAsserts } from './device-assert';
import { frameworkErrors, frameworkLabel, isKernelFault, kernelFault, kernelFaultSpecifics, type FrameworkError, type KernelFault } from './python-fault';

export type { OomBreakdown, OomCause, MemoryHolder } from './oom';
export type { KernelFault, TraceFrame } from './python-fault';
export type { DeviceAssert } from './device-assert';

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
  source: 'pytorch-oom' | 'pytorch' | 'cupy' | 'compute-sanitizer' | 'driver-api' | 'runtime-api' | 'message' | 'unknown';
  error: CatalogEntry | null;
  title: string;
  explanation: Explanation | null;
  oom: OomBreakdown | null;
  /** A kernel that failed while running: where it surfaced, whether the trace can be trusted, the assertions. */
  fault: KernelFault | null;
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
    fault: null,
    sanitizer: [],
    specifics: [],
    ...extra,
  };
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

/** The specifics for an error that carries no numbers of its own: a kernel fault, or an allocation that failed. */
function errorSpecifics(text: string, error: CatalogEntry, fault: KernelFault): string[] {
  if (isKernelFault(error)) return kernelFaultSpecifics(fault, error);
  if (isOutOfMemory(error)) return rawOomSpecifics(text);
  return [];
}

function explainFrameworkError(text: string, found: FrameworkError[]): PasteExplanation | null {
  const errors = found.filter((e) => e.error !== null);
  const primary = errors[0];
  if (!primary?.error) return null;
  const fault = kernelFault(text, errors);
  const base = result(primary.framework, primary.error);
  return {
    ...base,
    title: `${frameworkLabel(primary.framework)}: ${base.title}`,
    fault: isKernelFault(primary.error) ? fault : null,
    specifics: errorSpecifics(text, primary.error, fault),
  };
}

function explainCatalogError(text: string, source: PasteExplanation['source'], error: CatalogEntry): PasteExplanation {
  const fault = kernelFault(text, []);
  const kernel = isKernelFault(error);
  return result(kernel && fault.framework ? fault.framework : source, error, {
    fault: kernel ? fault : null,
    specifics: errorSpecifics(text, error, fault),
  });
}

/** "ModuleNotFoundError: No module named 'x'": the exception a Python traceback ends with, when it is not a CUDA one. */
function pythonExceptionLine(text: string): string[] {
  const last = [...text.matchAll(/^([A-Za-z_][\w.]*(?:Error|Exception)): ([^\n]*)$/gm)].pop();
  return last ? [`The traceback ends in ${last[1]}: ${last[2]} — a Python error, not a CUDA one.`] : [];
}

/** Recognises a pasted error in the forms users paste, and explains it. */
export function explainPaste(text: string): PasteExplanation {
  const paste = text.slice(0, 200_000);
  const oom = parsePytorchOom(paste);
  if (oom)
    return result('pytorch-oom', lookupCode(CUDA_ERROR_OUT_OF_MEMORY) ?? null, {
      title: 'PyTorch: CUDA out of memory',
      oom,
      specifics: pytorchOomSpecifics(oom),
    });

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

  const cupyOom = parseCupyOom(paste);
  if (cupyOom)
    return result('cupy', lookupCode(CUDA_ERROR_OUT_OF_MEMORY) ?? null, { title: 'CuPy: out of memory', oom: cupyOom, specifics: cupyOomSpecifics(cupyOom) });

  const framework = explainFrameworkError(paste, frameworkErrors(paste));
  if (framework) return framework;

  const driverName = /\b(CUDA_ERROR_[A-Z_]+)\b/.exec(paste);
  const runtimeName = /\b(cudaError[A-Za-z]+)\b/.exec(paste);
  if (driverName || runtimeName) {
    const entry = lookupName((driverName ?? runtimeName)![1]!);
    if (entry) return explainCatalogError(paste, driverName ? 'driver-api' : 'runtime-api', entry);
  }
  if (parseDeviceAsserts(paste).length > 0) return explainCatalogError(paste, 'message', lookupCode(710)!);
  const numbered = /(?:error(?: code)?|code|err)\s*[=:]?\s*(\d{1,3})\b/i.exec(paste);
  const lower = paste.toLowerCase();
  for (const m of MESSAGES_LONGEST_FIRST) {
    if (lower.includes(m.message.toLowerCase())) {
      const entry = (m.api === 'runtime' ? lookupRuntimeCode(m.code) : lookupCode(m.code)) ?? null;
      return entry ? explainCatalogError(paste, 'message', entry) : result('message', null);
    }
  }
  if (numbered) {
    const entry = lookupCode(Number(numbered[1])) ?? lookupRuntimeCode(Number(numbered[1]));
    if (entry) return explainCatalogError(paste, 'message', entry);
  }
  return {
    recognized: false,
    source: 'unknown',
    error: null,
    title: 'Not recognised',
    explanation: null,
    oom: null,
    fault: null,
    sanitizer: [],
    specifics: [
      ...pythonExceptionLine(paste),
      'This does not look like a CUDA error message. Paste the full error line (for example "CUDA error: an illegal memory access was encountered", a CUDA_ERROR_* or cudaError* name, PyTorch\'s "CUDA out of memory" message, or compute-sanitizer output).',
    ],
  };
}
