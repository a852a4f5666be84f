import { delimiter, isAbsolute, join } from 'node:path';

import { firstRunnable } from '../tools/find-tool';

/** Where a tool's target must run under Node.js and none was found: what happened and what to do, in words. */
export const NO_TOOL_NODE =
  'The desktop app runs a plan under compute-sanitizer or Nsight Compute in a runner the tool starts, which needs Node.js, and the app’s own binary does not run as Node.js. No Node.js was found on PATH: install Node.js 20.17 or later, or set GPU_WORKBENCH_NODE to its full path, and try again (the gpu-workbench CLI runs it as it is).';

/**
 * The Node.js binary a tool (compute-sanitizer, ncu) starts the workbench's runner with. Under Node (serve, the CLI)
 * it is this process's own. Under Electron it cannot be: the packaged binary does not run as Node (the runAsNode fuse
 * is off, electron-builder.yml) and would open a second app. Then GPU_WORKBENCH_NODE (an absolute path), else the
 * first `node` on PATH; neither, a problem in words.
 */
export function toolTargetNode(
  env: NodeJS.ProcessEnv = process.env,
  versions: NodeJS.ProcessVersions = process.versions,
  execPath: string = process.execPath,
): { path: string } | { problem: string } {
  if (!versions['electron']) return { path: execPath };
  const given = env['GPU_WORKBENCH_NODE'];
  if (given) {
    if (isAbsolute(given) && firstRunnable([given])) return { path: given };
    return { problem: `GPU_WORKBENCH_NODE is ${given}, which is not an executable file named by its full path. ${NO_TOOL_NODE}` };
  }
  // Absolute PATH entries only: a relative one would make the binary depend on the working folder.
  const onPath = firstRunnable(
    (env['PATH'] ?? '')
      .split(delimiter)
      .filter((dir) => isAbsolute(dir))
      .map((dir) => join(dir, 'node')),
  );
  return onPath ? { path: onPath } : { problem: NO_TOOL_NODE };
}
