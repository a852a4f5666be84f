import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cachedRoot: string | null = null;

/** The checkout or install root: the nearest folder up from this file whose package.json is ours. */
export function projectRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = __dirname;
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'gpu-workbench') return (cachedRoot = dir);
      } catch {
        // not ours; keep looking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the gpu-workbench root above ${__dirname}`);
    dir = parent;
  }
}

export const addonPath = (): string => process.env['GPU_WORKBENCH_ADDON'] ?? join(projectRoot(), 'native/build/Release/gpu_workbench_native.node');
export const distEntry = (name: string): string => join(projectRoot(), 'dist/main', name);

/**
 * A path inside the packaged app's archive, as a program other than Electron must open it: from the files unpacked
 * beside it (electron-builder's asarUnpack). Only Electron reads inside app.asar; a runner that compute-sanitizer or
 * ncu starts under a real Node.js (process/tool-node.ts) does not. Under Node, or outside an archive, the path is
 * returned as it is; the archive is the last folder so named (a folder above it may be called app.asar too).
 */
export const outsideAsar = (path: string, versions: NodeJS.ProcessVersions = process.versions): string =>
  versions['electron'] ? path.replace(/^(.*[\\/])app\.asar([\\/])/, '$1app.asar.unpacked$2') : path;
export const rendererDir = (): string => join(projectRoot(), 'dist/renderer');
export const appVersion = (): string => (JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version;
