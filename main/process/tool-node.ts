import { statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

import { firstRunnable, toolVersion } from '../tools/find-tool';

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
    if (given === execPath) return { problem: `GPU_WORKBENCH_NODE names the app itself, which does not run as Node.js: set it to a Node.js 20.17 or later.` };
    if (isAbsolute(given) && firstRunnable([given])) return { path: given };
    return {
      problem: `GPU_WORKBENCH_NODE is ${given.slice(0, 300)}, which is not an executable file named by its full path: set it to a Node.js 20.17 or later, or unset it to use the first node on PATH.`,
    };
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

/** The oldest Node.js the runner's bundle runs on (package.json's engines). */
const OLDEST_NODE = [20, 17, 0] as const;
/** Each Node.js's version, by its path and what its file is (a binary upgraded in place is asked again); only answers. */
const versionsSeen = new Map<string, Promise<string | null>>();

/**
 * toolTargetNode, with a Node.js found outside this process asked its version (bounded in time; an answer is kept for
 * that file): an older one than the runner needs would fail to start it, and the run read as a runner that died while
 * starting.
 */
export async function checkedToolNode(versions: NodeJS.ProcessVersions = process.versions): Promise<{ path: string } | { problem: string }> {
  const chosen = toolTargetNode(process.env, versions);
  if ('problem' in chosen || !versions['electron']) return chosen;
  let file = chosen.path;
  try {
    const { ino, size, mtimeMs } = statSync(chosen.path);
    file = `${chosen.path}\0${ino}\0${size}\0${mtimeMs}`;
  } catch {
    // gone since it was found: asked anyway, and said as it answers
  }
  let asked = versionsSeen.get(file);
  if (!asked) {
    asked = toolVersion(chosen.path, (out) => /^v(\d+\.\d+\.\d+)/m.exec(out)?.[1] ?? null);
    versionsSeen.set(file, asked);
    // No answer (a slow first start, a spawn error) is not kept: the next run asks again.
    void asked.then((version) => version ?? versionsSeen.delete(file));
  }
  return judgeToolNode(chosen.path, await asked);
}

/** A Node.js by what its --version said: the path if new enough, else what to do. */
export function judgeToolNode(path: string, version: string | null): { path: string } | { problem: string } {
  if (!version)
    return {
      problem: `${path} did not say its version when asked (node --version), so the runner is not started with it: check that it is Node.js 20.17 or later, or set GPU_WORKBENCH_NODE to one.`,
    };
  const parts = version.split('.').map(Number);
  const older = OLDEST_NODE.findIndex((n, i) => (parts[i] ?? 0) !== n);
  if (older === -1 || (parts[older] ?? 0) > OLDEST_NODE[older]!) return { path };
  return {
    problem: `${path} is Node.js ${version}, and the runner needs ${OLDEST_NODE.join('.')} or later: install a newer one, or set GPU_WORKBENCH_NODE to its full path.`,
  };
}
