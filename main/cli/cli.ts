import { Command, CommanderError } from 'commander';

import { callsStillBlocked } from '../doctor/time-limit';
import { EXIT } from './exit-codes';
import { UsageError } from './usage-error';

type Register = (program: Command) => void;

/** A command of the gpu-workbench command line, its module loaded only when it is asked for (commands.ts). */
export interface CliCommand {
  name: string;
  load: () => Promise<Register>;
}

/** The commands argv names first (`gpu-workbench diagnose …`: that one); all of them for anything else (help, a mistake). */
export function commandsFor(argv: string[], commands: readonly CliCommand[]): string[] {
  const named = commands.find((c) => c.name === argv[2]);
  return named ? [named.name] : commands.map((c) => c.name);
}

async function buildProgram(argv: string[], commands: readonly CliCommand[]): Promise<Command> {
  const program = new Command('gpu-workbench')
    .description('Edit, compile, validate, run and diagnose CUDA kernels.')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) })
    .showHelpAfterError('(run with --help for usage)');
  const wanted = new Set(commandsFor(argv, commands));
  const registers = await Promise.all(commands.filter((c) => wanted.has(c.name)).map((c) => c.load()));
  for (const register of registers) register(program);
  return program;
}

export async function main(argv: string[], commands: readonly CliCommand[]): Promise<number> {
  try {
    const program = await buildProgram(argv, commands);
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (error instanceof UsageError) {
      console.error(`✗ ${error.message}`);
      return EXIT.usage;
    }
    console.error(`✗ Unexpected error: ${error instanceof Error ? error.message : String(error)}`);
    console.error('  This is a bug in GPU Workbench; please report it with the command you ran.');
    return EXIT.failed;
  }
}

/** The process's command line, run; its exit code set when the answer is written. */
export function runProcessCommandLine(commands: readonly CliCommand[]): void {
  void main(process.argv, commands).then((code) => {
    process.exitCode = code;
    // A driver or NVML call that ran over its limit (a wedged GPU) still holds a worker thread, which would keep
    // this process alive after its answer was printed: end it now (stdout and stderr are written synchronously).
    if (callsStillBlocked() > 0) process.exit(code);
  });
}
