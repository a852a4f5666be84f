import { createHandlers } from '../host-api';
import { rendererDir } from '../paths';
import { forkLauncher } from '../process/launcher';
import { createWorkbench } from '../workbench';
import { startServeHost } from './serve-host';

export { parsePort } from './parse-port';

/**
 * Serves the UI and the API on 127.0.0.1 until SIGINT or SIGTERM; resolves with the exit code. The one
 * path behind both `gpu-workbench serve` and `npm run serve`.
 */
export async function serveUntilStopped(options: { port: number; spare: boolean; allowPrograms?: boolean }): Promise<number> {
  const workbench = createWorkbench(forkLauncher, { warmSpare: options.spare });
  let host;
  try {
    host = await startServeHost({
      port: options.port,
      rendererDir: rendererDir(),
      handlers: createHandlers(workbench, 'serve', { runsPrograms: options.allowPrograms ?? false }),
    });
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    console.error(
      e.code === 'EADDRINUSE'
        ? `✗ Port ${options.port} is in use: pass --port 0 for a free one, or another port.`
        : `✗ Could not start the server: ${e.message}`,
    );
    await workbench.dispose();
    return 1;
  }
  console.log(`GPU Workbench is serving at ${host.url}`);
  console.log('Open that URL in a browser on this machine, or forward the port over SSH (ssh -L).');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await Promise.all([host.close(), workbench.dispose()]);
  return 0;
}
