import { lookupName, lookupRuntimeCode, type CatalogEntry } from '../cuda/error-catalog';
import { parseDeviceAsserts, assertSpecifics, type DeviceAssert } from './device-assert';
import { ERROR_MESSAGES } from './error-strings.generated';

export type Framework = 'pytorch' | 'cupy';

/** A CUDA error as a Python library raised it, and where in the paste. */
export interface FrameworkError {
  framework: Framework;
  error: CatalogEntry | null;
  index: number;
}

export interface TraceFrame {
  file: string;
  line: number;
  function: string;
  /** The source line Python printed under the frame, where it did. */
  code: string | null;
}

/** A kernel that failed while running (illegal address, launch failure, misaligned address, device assert...). */
export interface KernelFault {
  framework: Framework | null;
  /** Other libraries in the paste that reported the same dead context. */
  alsoReportedBy: Framework[];
  /** true: PyTorch left out its "might be asynchronously reported" note, so CUDA_LAUNCH_BLOCKING=1 was set; null: the paste cannot tell. */
  launchBlocking: boolean | null;
  /** The last traceback frame in the program's own code: where the error surfaced. */
  reportedAt: TraceFrame | null;
  /** The innermost frame: the library call that reported it. */
  innermost: TraceFrame | null;
  /** CuPy failed again while unloading its kernels at exit (Module.__dealloc__). */
  failedAtExit: boolean;
  asserts: DeviceAssert[];
}

/** Errors raised by a kernel while it ran: reported later than they happen, and fatal to the context. */
const KERNEL_FAULT_CODES: ReadonlySet<number> = new Set([700, 702, 710, 714, 715, 716, 717, 718, 719]);

export const isKernelFault = (e: CatalogEntry | null): boolean => e !== null && KERNEL_FAULT_CODES.has(e.code);

const LABEL: Record<Framework, string> = { pytorch: 'PyTorch', cupy: 'CuPy' };
export const frameworkLabel = (f: Framework) => LABEL[f];

function byMessage(message: string): CatalogEntry | null {
  const m = ERROR_MESSAGES.find((e) => e.api === 'runtime' && e.message === message.trim());
  return m ? (lookupRuntimeCode(m.code) ?? null) : null;
}

// torch.AcceleratorError: CUDA error: an illegal memory access was encountered
// Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com/...
const PYTORCH_ERROR = /(?:torch\.\w+|RuntimeError): CUDA error: ([^\n]+)(?:\n\s*Search for `(cudaError\w+)')?/g;
// cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorIllegalAddress: an illegal memory access was encountered
const CUPY_ERROR = /CUDA(?:Runtime|Driver)Error: (\w+): [^\n]+/g;

/** Every CUDA error PyTorch or CuPy raised in the paste, in the order they appear. */
export function frameworkErrors(text: string): FrameworkError[] {
  const pytorch = [...text.matchAll(PYTORCH_ERROR)].map((m) => ({
    framework: 'pytorch' as const,
    error: (m[2] ? lookupName(m[2]) : undefined) ?? byMessage(m[1]!),
    index: m.index!,
  }));
  const cupy = [...text.matchAll(CUPY_ERROR)].map((m) => ({ framework: 'cupy' as const, error: lookupName(m[1]!) ?? null, index: m.index! }));
  return [...pytorch, ...cupy].sort((a, b) => a.index - b.index);
}

const FRAME = /^ {2}File "([^"]+)", line (\d+), in ([^\n]+)\n(?: {4}(\S[^\n]*)\n)?/gm;
/** Library internals, not the program's own code. */
const LIBRARY_FILE = /site-packages|dist-packages|\.pyx$|^cupy|^torch/;

/** The frames of the traceback that ends at the error at `index`. */
function framesBefore(text: string, index: number): TraceFrame[] {
  const start = text.lastIndexOf('Traceback (most recent call last):', index);
  if (start < 0) return [];
  return [...text.slice(start, index).matchAll(FRAME)].map((m) => ({ file: m[1]!, line: Number(m[2]), function: m[3]!.trim(), code: m[4]?.trim() ?? null }));
}

/** PyTorch prints "might be asynchronously reported" unless CUDA_LAUNCH_BLOCKING=1; the "Search for" line shows the message is whole. */
function launchBlockingIn(text: string): boolean | null {
  if (/asynchronously reported/.test(text)) return false;
  return /Search for `cudaError/.test(text) ? true : null;
}

/** What a paste says about a kernel fault that PyTorch or CuPy reported; the first of `errors` is the one explained. */
export function kernelFault(text: string, errors: FrameworkError[]): KernelFault {
  const primary = errors[0] ?? null;
  const frames = primary ? framesBefore(text, primary.index) : [];
  const reporting = frames.filter((f) => !/check_status/.test(f.function));
  return {
    framework: primary?.framework ?? (/ATen|aten\/src/.test(text) ? 'pytorch' : null),
    alsoReportedBy: [...new Set(errors.map((e) => e.framework))].filter((f) => f !== primary?.framework),
    launchBlocking: primary?.framework === 'pytorch' ? launchBlockingIn(text) : null,
    reportedAt: frames.filter((f) => !LIBRARY_FILE.test(f.file)).pop() ?? null,
    innermost: reporting.pop() ?? null,
    failedAtExit: /Exception ignored in: 'cupy\.cuda\.function\.Module\.__dealloc__'/.test(text),
    asserts: parseDeviceAsserts(text),
  };
}

const where = (f: TraceFrame) => `File "${f.file}", line ${f.line}, in ${f.function}`;
/** A library's frame by its function, the program's own by file and line. */
const describe = (f: TraceFrame) => (LIBRARY_FILE.test(f.file) ? f.function : `File "${f.file}", line ${f.line}`);

function asyncLine(k: KernelFault): string {
  if (k.launchBlocking && k.innermost) {
    const call = k.innermost.code ? `${k.innermost.code} (${where(k.innermost)})` : where(k.innermost);
    const from = k.reportedAt && k.reportedAt !== k.innermost ? `, called from ${where(k.reportedAt)}` : '';
    return `PyTorch left out its note that the error may be reported late, so CUDA_LAUNCH_BLOCKING=1 was in effect: every launch waited for its kernel, and the traceback points at the operation that failed: ${call}${from}.`;
  }
  const at = k.innermost
    ? ` (here: ${describe(k.innermost)}${k.reportedAt && k.reportedAt !== k.innermost ? `, called from ${describe(k.reportedAt)}` : ''})`
    : '';
  return (
    `The error is asynchronous: a kernel launched earlier failed, and CUDA reported it at the next call that waited on the GPU${at}, so the stack trace points at a later call, not at the operation that failed. ` +
    'Re-run with CUDA_LAUNCH_BLOCKING=1 so that every launch waits for its kernel and the traceback stops at the real operation.'
  );
}

const STICKY =
  "The error is sticky: this process's CUDA context is unusable from now on, and every later CUDA call fails the same way, in every library that shares it. Catching the exception does not recover it: restart the process (in Jupyter, restart the kernel).";

function sanitizerLine(k: KernelFault, isAssert: boolean): string {
  const run = k.framework ? 'compute-sanitizer --tool memcheck python your_script.py' : 'compute-sanitizer --tool memcheck ./your_program';
  if (isAssert && k.asserts.length > 0)
    return `The assertion lines already name the kernel and its line; for a fault without them, ${run} finds the kernel, the line, the thread and the address.`;
  return `${run} finds the faulting kernel and line (for kernels built with -lineinfo), the thread and the address; it runs far slower, so shrink the input first.`;
}

function otherLibraryLine(k: KernelFault): string | null {
  if (!k.framework || k.alsoReportedBy.length === 0) return null;
  const others = k.alsoReportedBy.map(frameworkLabel).join(' and ');
  const atExit =
    k.failedAtExit && k.alsoReportedBy.includes('cupy')
      ? ', while unloading its kernels at exit (Module.__dealloc__): CuPy had kernels of its own loaded in this process'
      : '';
  const all = [k.framework, ...k.alsoReportedBy].map(frameworkLabel).join(' and ');
  return (
    `${others} reported the same error too${atExit}. ${all} share this process's CUDA context, so the faulting kernel may have come from a different library — ${others}, or any other — ` +
    `even though ${frameworkLabel(k.framework)} reported it. CUDA_LAUNCH_BLOCKING=1 or compute-sanitizer tells which.`
  );
}

function atExitLine(k: KernelFault): string | null {
  if (!k.failedAtExit || k.framework !== 'cupy') return null;
  return 'The later errors raised in cupy.cuda.function.Module.__dealloc__ are the same failure again: at exit CuPy tried to unload its kernels in the dead context.';
}

/** Why the trace misleads, why the process must restart, how to find the kernel, and what an assert says. */
export function kernelFaultSpecifics(k: KernelFault, error: CatalogEntry): string[] {
  const isAssert = error.code === 710;
  const lines = [...(isAssert ? assertSpecifics(k.asserts) : []), asyncLine(k), STICKY, sanitizerLine(k, isAssert), otherLibraryLine(k), atExitLine(k)];
  return lines.filter((s): s is string => s !== null);
}
