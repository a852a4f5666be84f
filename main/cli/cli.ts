import { Command, CommanderError } from 'commander';

import { registerBundleCommand } from './bundle-command';
import { registerCheckCommand } from './check-command';
import { UsageError } from './cli-support';
import { registerCompileCommand } from './compile-command';
import { registerDevicesCommand } from './devices-command';
import { registerDiagnoseCommand } from './diagnose-command';
import { registerDoctorCommand } from './doctor-command';
import { EXIT } from './exit-codes';
import { registerExplainCommand } from './explain-command';
import { registerMemoryCommand } from './memory-command';
import { registerMonitorCommand } from './monitor-command';
import { registerProfileCommand } from './profile-command';
import { registerRunCommand } from './run-command';
import { registerSamplesCommand } from './samples-command';
import { registerSanitizeCommand } from './sanitize-command';
import { registerServeCommand } from './serve-command';
import { registerValidateCommand } from './validate-command';

/**
 * The gpu-workbench command line: one module per command, in the order `--help` lists them. Each command that
 * compiles or runs takes its services from main/workbench.ts, as serve and the desktop app do (cli-support.ts).
 */
function buildProgram(): Command {
  const program = new Command('gpu-workbench')
    .description('Edit, compile, validate, run and diagnose CUDA kernels.')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(text) })
    .showHelpAfterError('(run with --help for usage)');
  registerDevicesCommand(program);
  registerDoctorCommand(program);
  registerCompileCommand(program);
  registerValidateCommand(program);
  registerExplainCommand(program);
  registerRunCommand(program);
  registerServeCommand(program);
  registerBundleCommand(program);
  registerSanitizeCommand(program);
  registerSamplesCommand(program);
  registerMemoryCommand(program);
  registerMonitorCommand(program);
  registerProfileCommand(program);
  registerCheckCommand(program);
  registerDiagnoseCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
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
