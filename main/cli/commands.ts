import type { CliCommand } from './cli';

/**
 * The gpu-workbench command line: one module per command, in the order `--help` lists them. Each command that
 * compiles or runs takes its services from main/workbench.ts, as serve and the desktop app do (cli-support.ts).
 *
 * A command's module is loaded only when it is asked for: the bundle initialises a module reached through import() on
 * first use, so `gpu-workbench diagnose` builds none of the other commands' schemas and services (a new CLI process
 * started about 80 ms after Node's own start with all of them loaded, on this 2-core machine; more on the GPU hosts).
 * `gpu-workbench diagnose` goes further, with a bundle of its own that holds no other command (diagnose-entry.ts).
 */
export const COMMANDS: readonly CliCommand[] = [
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
