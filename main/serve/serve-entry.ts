import { Command } from 'commander';

import { serveUntilStopped } from './serve-command';
import { withServeOptions, type ServeCommandOptions } from './serve-options';

const program = withServeOptions(
  new Command('gpu-workbench serve').description('Serve the workbench UI on 127.0.0.1 for a browser (or an SSH tunnel to a GPU server).'),
).parse();

const opts = program.opts<ServeCommandOptions>();
void serveUntilStopped(opts).then((code) => process.exit(code));
