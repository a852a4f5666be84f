import { Command, InvalidArgumentError } from 'commander';

import { createHandlers } from '../host-api';
import { rendererDir } from '../paths';
import { forkLauncher } from '../process/launcher';
import { createWorkbench } from '../workbench';
import { startServeHost } from './serve-host';

const program = new Command('gpu-workbench serve')
  .description('Serve the workbench UI on 127.0.0.1 for a browser (or an SSH tunnel to a GPU server).')
  .option(
    '--port <n>',
    'port to listen on (0 picks a free one)',
    (v) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is a whole number from 0 to 65535');
      return n;
    },
    7411,
  )
  .option('--no-spare', 'do not keep a warm spare runner')
  .parse();

const opts = program.opts<{ port: number; spare: boolean }>();
const workbench = createWorkbench(forkLauncher, { warmSpare: opts.spare });

startServeHost({ port: opts.port, rendererDir: rendererDir(), handlers: createHandlers(workbench, 'serve') }).then(
  (host) => {
    console.log(`GPU Workbench is serving at ${host.url}`);
    console.log('Open that URL in a browser on this machine, or forward the port over SSH (ssh -L).');
    const stop = () => {
      void Promise.all([host.close(), workbench.dispose()]).finally(() => process.exit(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  },
  (error: NodeJS.ErrnoException) => {
    console.error(
      error.code === 'EADDRINUSE'
        ? `Port ${opts.port} is in use: pass --port 0 for a free one, or another port.`
        : `Could not start the server: ${error.message}`,
    );
    void workbench.dispose().finally(() => process.exit(1));
  },
);
