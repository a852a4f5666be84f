import { Command, CommanderError } from 'commander';

import { EXIT } from './exit-codes';
import { UsageError } from './usage-error';

type Register = (program: Command) => void;

/**
 * The gpu-workbench command line: one module per command, in the order `--help` lists them. Each command that
 * compiles or runs takes its services from main/workbench.ts, as serve and the desktop app do (cli-support.ts).
 *
 * A command's module is loaded only when it is asked for: the bundle initialises a module reached through import() on
 * first use, so `gpu-workbench diagnose` builds none of the other commands' schemas and services (a new CLI process
 * started about 80 ms after Node's own start with all of them loaded, on this 2-core machine; more on the GPU hosts).
 */
const COMMANDS: { name: string; load: () => Promise<Register> }[] = [
  { name: 'devices', load: async () => (await import('./devices-command')).registerDevicesCommand },
  { name: 'doctor', load: async () => (await import('./doctor-command')).registerDoctorCommand },
  { name: 'compile', load: async () => (await import('./compile-command')).registerCompileCommand },
  { name: 'validate', load: async () => (await import('./validate-command')).registerValidateCommand },
  { name: 'explain', load: async () => (await import('./explain-command')).registerExplainCommand },
  { name: 'run', load: async () => (await import('./run-command')).registerRunCommand },
  { name: 'serve', load: async () => (await import('./serve-command')).registerServeCommand },
  { name: 'bundle', load: async () => (await import('./bundle-command')).registerBundleCommand },
  { name: 'sanitize', load: async () => (await import('./sanitize-command')).registerSanitizeCommand },
  { name: 'samples', load: async () => (await import('./samples-command')).registerSamplesCommand },
  { name: 'memory', load: async () => (await import('./memory-command')).registerMemoryCommand },
  { name: 'monitor', load: async () => (await import('./monitor-command')).registerMonitorCommand },
  { name: 'profile', load: async () => (await import('./profile-command')).registerProfileCommand },
  { name: 'check', load: async () => (await import('./check-command')).registerCheckCommand },
  { name: 'diagnose', load: async () => (await import('./diagnose-command')).registerDiagnoseCommand },
];

/** The commands argv names first (`gpu-workbench diagnose …`: that one); all of them for anything else (help, a mistake). */
export function commandsFor(argv: string[]): string[] {
  const named = COMMANDS.find((c) => c.name === argv[2]);
  return named ? [named.name] : COMMANDS.map((c) => c.name);
}

async function buildProgram(argv: string[]): Promise<Command> {
  const program = new Command('gpu-workbench')
    .description('Edit, compile, validate, run and diagnose CUDA kernels.')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) })
    .showHelpAfterError('(run with --help for usage)');
  const wanted = new Set(commandsFor(argv));
  const registers = await Promise.all(COMMANDS.filter((c) => wanted.has(c.name)).map((c) => c.load()));
  for (const register of registers) register(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    const program = await buildProgram(argv);
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
