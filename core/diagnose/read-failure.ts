import { isOutOfMemory } from '../cuda/error-catalog';
import { explainPaste, type TraceFrame } from '../explain/explain-paste';
import { isKernelFault } from '../explain/python-fault';
import type { ExitStatus, FailureCategory, FailureReading } from './evidence';

/** Signals that mean the process itself crashed (not that something stopped it). */
const CRASH_SIGNALS: Record<string, string> = {
  SIGSEGV: 'a segmentation fault: it read or wrote memory it may not touch',
  SIGBUS: 'a bus error: an access the hardware cannot make (a mapped file truncated, a misaligned access)',
  SIGABRT: 'an abort: a library found a state it could not go on from (an assert, std::terminate, a double free)',
  SIGILL: 'an illegal instruction',
  SIGFPE: 'an arithmetic fault (an integer divided by zero)',
};
const STOP_SIGNALS: Record<string, string> = {
  SIGKILL: 'killed (SIGKILL): by the out-of-memory killer of the host, or by someone',
  SIGTERM: 'terminated (SIGTERM)',
  SIGINT: 'interrupted (SIGINT)',
  SIGHUP: 'hung up (SIGHUP)',
};
const SIGNAL_NUMBERS: Record<number, string> = { 4: 'SIGILL', 6: 'SIGABRT', 7: 'SIGBUS', 8: 'SIGFPE', 9: 'SIGKILL', 11: 'SIGSEGV', 15: 'SIGTERM' };

export const isCrashSignal = (signal: string | null): boolean => signal !== null && signal in CRASH_SIGNALS;

/**
 * The signal a process died of: the one Node reports, else the one a shell or a tool folded into the exit code
 * (128 + n, as sh does; compute-sanitizer exits with the program's signal number).
 */
export function deathSignal(exit: Pick<ExitStatus, 'code' | 'signal'>, underTool = false): string | null {
  if (exit.signal) return exit.signal;
  if (exit.code === null) return null;
  if (exit.code > 128 && SIGNAL_NUMBERS[exit.code - 128]) return SIGNAL_NUMBERS[exit.code - 128]!;
  if (underTool && SIGNAL_NUMBERS[exit.code] && isCrashSignal(SIGNAL_NUMBERS[exit.code]!)) return SIGNAL_NUMBERS[exit.code]!;
  return null;
}

export function exitText(exit: ExitStatus, underTool = false): string {
  if (exit.outOfBudget) return 'stopped: the time budget ran out';
  if (exit.cancelled) return 'stopped: cancelled';
  const signal = deathSignal(exit, underTool);
  if (signal) return `killed by ${signal} (${CRASH_SIGNALS[signal] ?? STOP_SIGNALS[signal] ?? 'a signal'})`;
  return exit.code === null ? 'ended without an exit status' : `exited with code ${exit.code}`;
}

/** Library internals and the interpreter's own files, never the program's code. */
const LIBRARY_PATH = /site-packages|dist-packages|\/lib\/python\d[\d.]*\/|^<frozen |^<string>$|\.pyx$/;
export const isLibraryFrame = (f: Pick<TraceFrame, 'file'>): boolean => LIBRARY_PATH.test(f.file);

const TRACEBACK_FRAME = /^ {2}File "([^"]+)", line (\d+), in ([^\n]+)\n(?: {4}(\S[^\n]*)\n)?/gm;
// faulthandler: '  File "/path/peek.py", line 29 in <module>' (most recent call first)
const FAULT_HANDLER_FRAME = /^ {2}File "([^"]+)", line (\d+) in ([^\n]+)$/gm;

/** The last traceback in the output: its frames, outermost first, and the exception it ends with. */
export function lastTraceback(text: string): { frames: TraceFrame[]; exception: { type: string; message: string } | null } | null {
  const start = text.lastIndexOf('Traceback (most recent call last):');
  if (start < 0) return null;
  const tail = text.slice(start);
  const frames = [...tail.matchAll(TRACEBACK_FRAME)].map((m) => ({ file: m[1]!, line: Number(m[2]), function: m[3]!.trim(), code: m[4]?.trim() ?? null }));
  const exception = /^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)): ?([^\n]*)$/m.exec(tail);
  return { frames, exception: exception ? { type: exception[1]!, message: exception[2]! } : null };
}

/** Python's fault handler's stack ("Fatal Python error: Segmentation fault"), innermost first, with its source lines filled in later. */
export function faultHandlerFrames(text: string): TraceFrame[] {
  const start = text.search(/^Fatal Python error: /m);
  if (start < 0) return [];
  const block = text.slice(start).split(/\n\s*\n(?!Current thread|Thread 0x)/)[0]!;
  const current = block.indexOf('Current thread');
  const frames = [...block.slice(current >= 0 ? current : 0).matchAll(FAULT_HANDLER_FRAME)];
  return frames.map((m) => ({ file: m[1]!, line: Number(m[2]), function: m[3]!.trim(), code: null }));
}

/** The innermost frame of the program's own code, and the library frame it called into. */
function userFrames(outermostFirst: TraceFrame[]): { user: TraceFrame | null; innermost: TraceFrame | null } {
  const lastUser = outermostFirst.map((f) => !isLibraryFrame(f)).lastIndexOf(true);
  if (lastUser < 0) return { user: null, innermost: outermostFirst.at(-1) ?? null };
  return { user: outermostFirst[lastUser]!, innermost: outermostFirst[lastUser + 1] ?? null };
}

const NOT_FAULT_ERRORS = new Set([100, 101, 35, 803, 804, 999, 3, 34, 46]);

function categorise(exit: ExitStatus, signal: string | null, explained: ReturnType<typeof explainPaste>, exception: string | null): FailureCategory {
  if (exit.outOfBudget || exit.cancelled) return 'stopped';
  if (explained.oom) return 'out-of-memory';
  if (explained.error && isKernelFault(explained.error)) return 'kernel-fault';
  if (isCrashSignal(signal)) return 'host-crash';
  if (explained.recognized && explained.error && isOutOfMemory(explained.error)) return 'out-of-memory';
  if (explained.recognized && explained.error && (NOT_FAULT_ERRORS.has(explained.error.code) || exception !== null)) return 'cuda-error';
  if (exception && /No CUDA GPUs are available|Found no NVIDIA driver|CUDA driver version is insufficient/.test(exception)) return 'cuda-error';
  if (exception) return 'python-error';
  if (explained.recognized && explained.error) return 'cuda-error';
  return exit.code === 0 && signal === null ? 'clean' : 'exit-code';
}

/**
 * What one run's output and exit say: the error (through the explain engine), where it surfaced in the
 * program's own code, and whether it is a kernel fault, an out-of-memory, a crash, or an error that is not a fault.
 */
export function readFailure(output: string, exit: ExitStatus, underTool = false): FailureReading {
  const explained = explainPaste(output.length > 200_000 ? output.slice(-200_000) : output);
  const signal = deathSignal(exit, underTool);
  const traceback = lastTraceback(output);
  const handler = faultHandlerFrames(output);
  const exceptionLine = traceback?.exception ? `${traceback.exception.type}: ${traceback.exception.message}` : null;
  const category = categorise(exit, signal, explained, exceptionLine);
  const fromTraceback = traceback ? userFrames(traceback.frames) : { user: null, innermost: null };
  const fromHandler = handler.length ? userFrames([...handler].reverse()) : { user: null, innermost: null };
  const frames = fromTraceback.user ? fromTraceback : fromHandler.user ? fromHandler : fromTraceback;
  const error = explained.error ? { name: explained.error.name, code: explained.error.code, runtimeName: explained.error.runtimeName ?? null } : null;
  const title =
    category === 'clean'
      ? 'exited cleanly (code 0)'
      : category === 'host-crash' || category === 'stopped' || category === 'exit-code'
        ? exitText(exit, underTool)
        : explained.recognized
          ? explained.title
          : (exceptionLine ?? exitText(exit, underTool));
  return {
    category,
    title,
    error: category === 'python-error' ? null : error,
    framework: explained.fault?.framework ?? explained.oom?.framework ?? (/torch\./.test(exceptionLine ?? '') ? 'pytorch' : null),
    launchBlocking: explained.fault?.launchBlocking ?? null,
    userFrame: frames.user,
    innermost: frames.innermost,
    exception: traceback?.exception ?? null,
    asserts: explained.fault?.asserts ?? [],
    oom: explained.oom,
    specifics: category === 'python-error' || category === 'clean' ? [] : explained.specifics,
    exitText: exitText(exit, underTool),
  };
}
