import { readdir, realpath } from 'node:fs/promises';
import { join } from 'node:path';

import type { DiscoveryReport } from '../../core/discovery';
import type { InstallationFacts, ToolkitFact } from '../../core/doctor/facts';
import { sitePackages } from '../native/library-candidates';
import { readRegularFile } from '../services/safe-fs';

/** Where to look; the defaults are the machine's own (tests give folders of their own). */
export interface InstallationPlaces {
  usrLocal: string;
  sitePackages: string[];
  env: Record<string, string | undefined>;
}

const defaultPlaces = (): InstallationPlaces => ({ usrLocal: '/usr/local', sitePackages: sitePackages(), env: process.env });

const resolved = async (path: string | null): Promise<string | null> => {
  if (!path?.startsWith('/')) return null;
  try {
    return await realpath(path);
  } catch {
    return null;
  }
};

const list = async (dir: string): Promise<string[]> => {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
};

const VERSION_FILE_BYTES = 64 * 1024;

async function readSmall(path: string): Promise<string | null> {
  try {
    return (await readRegularFile(path, VERSION_FILE_BYTES)).bytes.toString('utf8');
  } catch {
    return null;
  }
}

/** A dist-info folder's version: "nvidia_cuda_nvcc-13.0.88.dist-info" → nvcc, 13.0.88. */
const DIST_INFO = /^nvidia_cuda_(nvcc|nvrtc|runtime)(?:_cu(\d+))?-(\d+\.\d+(?:\.\d+)*)\.dist-info$/;

/**
 * A toolkit's version: version.json (CUDA 11.1 and newer), else the dist-info folders NVIDIA's wheel-built
 * toolkits carry (nvcc's first), else version.txt (CUDA 10 and older).
 */
async function toolkitVersion(root: string): Promise<string | null> {
  const json = await readSmall(join(root, 'version.json'));
  if (json) {
    try {
      const version = (JSON.parse(json) as { cuda?: { version?: unknown } }).cuda?.version;
      if (typeof version === 'string' && /^[\d.]{1,32}$/.test(version)) return version;
    } catch {
      // not JSON: try the others
    }
  }
  const infos = (await list(join(root, 'dist-info'))).flatMap((n) => {
    const m = DIST_INFO.exec(n);
    return m ? [{ kind: m[1]!, version: m[3]! }] : [];
  });
  const byKind = ['nvcc', 'runtime', 'nvrtc'].map((k) => infos.find((i) => i.kind === k)).find(Boolean);
  if (byKind) return byKind.version;
  const txt = await readSmall(join(root, 'version.txt'));
  return /CUDA Version (\d+\.\d+(?:\.\d+)*)/.exec(txt ?? '')?.[1] ?? null;
}

/** NVIDIA's CUDA wheels in one site-packages: nvidia/cu13 (CUDA 13), nvidia/cuda_nvrtc, nvidia/cuda_runtime (CUDA 12). */
async function wheelToolkits(site: string): Promise<ToolkitFact[]> {
  const infos = (await list(site)).flatMap((n) => {
    const m = DIST_INFO.exec(n);
    return m ? [{ kind: m[1]!, cu: m[2] ?? null, version: m[3]! }] : [];
  });
  const out: ToolkitFact[] = [];
  for (const pkg of await list(join(site, 'nvidia'))) {
    const root = join(site, 'nvidia', pkg);
    const libs = await list(join(root, 'lib'));
    const hasCuda = libs.some((n) => /^lib(nvrtc|cudart)\.so/.test(n)) || (await list(join(root, 'bin'))).includes('nvcc');
    if (!hasCuda) continue;
    const major = /^cu(\d+)$/.exec(pkg)?.[1];
    const kind = /^cuda_(nvcc|nvrtc|runtime)$/.exec(pkg)?.[1];
    const info = major ? infos.find((i) => i.version.split('.')[0] === major) : infos.find((i) => i.kind === kind);
    out.push({ root, realRoot: await resolved(root), version: info?.version ?? null, foundAs: 'python wheel' });
  }
  return out;
}

/** Every CUDA toolkit this machine has where builds look for one, and which of them the compilers in use come from. */
export async function findInstallations(discovery: DiscoveryReport, places: InstallationPlaces = defaultPlaces()): Promise<InstallationFacts> {
  const toolkits: ToolkitFact[] = [];
  for (const name of await list(places.usrLocal)) {
    if (!/^cuda(-\d+(\.\d+)*)?$/.test(name)) continue;
    const root = join(places.usrLocal, name);
    const realRoot = await resolved(root);
    toolkits.push({ root, realRoot, version: realRoot ? await toolkitVersion(realRoot) : null, foundAs: '/usr/local' });
  }
  for (const variable of ['CUDA_HOME', 'CUDA_PATH'] as const) {
    const value = places.env[variable];
    if (!value) continue;
    const realRoot = await resolved(value);
    toolkits.push({ root: value, realRoot, version: realRoot ? await toolkitVersion(realRoot) : null, foundAs: variable });
  }
  for (const site of places.sitePackages) toolkits.push(...(await wheelToolkits(site)));
  return {
    toolkits: toolkits.slice(0, 64),
    cudaHome: places.env['CUDA_HOME'] ?? null,
    cudaPath: places.env['CUDA_PATH'] ?? null,
    nvccRealPath: await resolved(discovery.nvcc.found ? discovery.nvcc.path : null),
    nvrtcRealPath: await resolved(discovery.nvrtc.loaded ? discovery.nvrtc.path : null),
    libcudaRealPath: await resolved(discovery.cuda.loaded ? discovery.cuda.path : null),
  };
}
