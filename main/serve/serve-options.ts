import { InvalidArgumentError, type Command } from 'commander';

import { parsePort } from './parse-port';

// serve's options, for `gpu-workbench serve` and `npm run serve` alike. Nothing here loads the web server.

export interface ServeCommandOptions {
  port: number;
  spare: boolean;
  allowPrograms?: boolean;
  /** Folders beside the one serve is started in that the browser may read and write under (--root). */
  root?: string[];
}

/** serve's options on `command`. */
export function withServeOptions(command: Command): Command {
  return command
    .option(
      '--port <n>',
      'port to listen on (0 picks a free one)',
      (v: string) => {
        const port = parsePort(v);
        if (port === null) throw new InvalidArgumentError('--port is a whole number from 0 to 65535');
        return port;
      },
      7411,
    )
    .option('--no-spare', 'do not keep a warm spare runner')
    .option(
      '--allow-programs',
      'let the browser run programs under compute-sanitizer (Sanitize a program); off by default: a request never chooses a program otherwise',
    )
    .option(
      '--root <folder>',
      'a folder the browser may read and write under, beside the one serve is started in (repeatable); hidden files, programs and the workbench’s own files stay out of reach',
      (value: string, previous: string[] = []) => [...previous, value],
    );
}
