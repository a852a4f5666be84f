import { runProcessCommandLine } from './cli';

// `gpu-workbench diagnose …` loads a bundle of its own (dist/main/cli.js picks it): the same command line, with the
// diagnosis alone in it, is 1.1 MB of code to read and compile where the whole CLI is 1.8 MB (commands.ts).
runProcessCommandLine([{ name: 'diagnose', load: async () => (await import('./diagnose-command')).registerDiagnoseCommand }]);
