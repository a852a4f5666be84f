import { Command, InvalidArgumentError } from 'commander';

import { parsePort, serveUntilStopped } from './serve-command';

const program = new Command('gpu-workbench serve')
  .description('Serve the workbench UI on 127.0.0.1 for a browser (or an SSH tunnel to a GPU server).')
  .option(
    '--port <n>',
    'port to listen on (0 picks a free one)',
    (v) =>
      parsePort(v) ??
      (() => {
        throw new InvalidArgumentError('a port is a whole number from 0 to 65535');
      })(),
    7411,
  )
  .option('--no-spare', 'do not keep a warm spare runner')
  .option('--allow-programs', 'let the browser run programs under compute-sanitizer (Sanitize a program)')
  .parse();

const opts = program.opts<{ port: number; spare: boolean; allowPrograms?: boolean }>();
void serveUntilStopped(opts).then((code) => process.exit(code));
