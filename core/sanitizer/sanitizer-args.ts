import { programArgv } from '../process/argument-words';
import { SANITIZER_TOOLS, type SanitizerTool } from './findings';

/** How one compute-sanitizer run is asked for: the tool and the few options the workbench chooses. */
export interface SanitizerOptions {
  tool: SanitizerTool;
  /** Findings the tool prints at most (0: all). The XML and the text are both cut at this. */
  printLimit: number;
  /** Seconds one kernel may run before the tool gives up on it (its default is 10 s; instrumented kernels are slower). */
  launchTimeoutS: number;
  /** memcheck only: report device memory never freed. */
  leakCheck: boolean;
}

export const DEFAULT_SANITIZER_OPTIONS: Omit<SanitizerOptions, 'tool'> = { printLimit: 10_000, launchTimeoutS: 60, leakCheck: true };

/** The exit status the tool is told to use when it finds something, so it can be told from the program's own failure. */
export const FOUND_EXIT_CODE = 86;

export const isSanitizerTool = (name: string): name is SanitizerTool => (SANITIZER_TOOLS as readonly string[]).includes(name);

/**
 * compute-sanitizer's arguments before the program's: XML saved per process (`%p`: a launcher that forks,
 * python or the workbench's own runner, writes one file per process), every process followed.
 */
export function sanitizerArguments(options: SanitizerOptions, xmlPattern: string): string[] {
  return [
    '--tool',
    options.tool,
    ...(options.tool === 'memcheck' && options.leakCheck ? ['--leak-check', 'full'] : []),
    '--print-limit',
    String(options.printLimit),
    '--launch-timeout',
    String(options.launchTimeoutS),
    '--error-exitcode',
    String(FOUND_EXIT_CODE),
    '--target-processes',
    'all',
    '--xml',
    '--save',
    xmlPattern,
  ];
}

/** compute-sanitizer's whole command line for a program: its options, then the program (never one of its options) and its arguments. */
export const sanitizeProgramArguments = (options: SanitizerOptions, xmlPattern: string, command: readonly string[]): string[] => [
  ...sanitizerArguments(options, xmlPattern),
  ...programArgv(command),
];

/** `NAME=value` for the program's environment; names as a shell would accept them. */
export function parseEnvAssignment(text: string): { name: string; value: string } | null {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(text);
  return m ? { name: m[1]!, value: m[2]! } : null;
}
