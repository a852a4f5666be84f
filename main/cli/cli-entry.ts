import { runProcessCommandLine } from './cli';
import { COMMANDS } from './commands';

runProcessCommandLine(COMMANDS);
