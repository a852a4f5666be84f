import type { Command } from 'commander';

import { withServeOptions, type ServeCommandOptions } from '../serve/serve-options';

/** `gpu-workbench serve`: the UI for a browser on 127.0.0.1 (main/serve/serve-command.ts does the serving). */
export function registerServeCommand(program: Command): void {
  withServeOptions(
    program
      .command('serve')
      .description('Serve the workbench UI on 127.0.0.1 for a browser: on a GPU server, reach it through an SSH tunnel (ssh -L 7411:127.0.0.1:7411).'),
  ).action(async (opts: ServeCommandOptions) => {
    // Loaded here, not at start: the web server and its WebSocket library are for this command only.
    const { serveUntilStopped } = await import('../serve/serve-command');
    process.exitCode = await serveUntilStopped(opts);
  });
}
