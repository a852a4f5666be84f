import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import type { Candidate } from './addon';

/**
 * Where each library is looked for, in order (ARCHITECTURE.md §2). Sonames are handed to the dynamic
 * loader as they are, so LD_LIBRARY_PATH, ld.so.cache and the system paths apply.
 */
export interface CandidateEnv {
  env: Record<string, string | undefined>;
  exists: (path: string) => boolean;
  list: (dir: string) => string[];
}

const realFs: CandidateEnv = {
  env: process.env,
  exists: existsSync,
  list: (dir) => {
    try {
      return readdirSync(dir);
    } catch {
      return [];
    }
  },
};

export const NVRTC_SONAMES = ['libnvrtc.so.13', 'libnvrtc.so.12', 'libnvrtc.so.11.2', 'libnvrtc.so'];

function toolkitRoots(e: CandidateEnv): { dir: string; source: string }[] {
  const roots: { dir: string; source: string }[] = [];
  for (const key of ['CUDA_PATH', 'CUDA_HOME']) {
    const value = e.env[key];
    if (value) roots.push({ dir: value, source: key });
  }
  return roots;
}

function systemToolkits(e: CandidateEnv): string[] {
  return [
    '/usr/local/cuda',
    ...e
      .list('/usr/local')
      .filter((n) => /^cuda-\d/.test(n))
      .sort()
      .reverse()
      .map((n) => `/usr/local/${n}`),
  ].filter((dir, i, all) => all.indexOf(dir) === i);
}

/** Python site-packages folders that hold NVIDIA's wheels (a nvidia/ folder): where NVRTC wheels are looked for, and the doctor's installations. */
export function sitePackages(e: CandidateEnv = realFs): string[] {
  const dirs: string[] = [];
  const bases = ['/usr/lib/python3/dist-packages', '/usr/local/lib', '/usr/lib', ...(e.env['HOME'] ? [join(e.env['HOME'], '.local/lib')] : [])];
  if (e.env['VIRTUAL_ENV']) bases.unshift(join(e.env['VIRTUAL_ENV'], 'lib'));
  if (e.env['CONDA_PREFIX']) bases.unshift(join(e.env['CONDA_PREFIX'], 'lib'));
  for (const base of bases) {
    if (base.endsWith('dist-packages')) dirs.push(base);
    for (const py of e.list(base).filter((n) => /^python3\.\d+$/.test(n))) {
      for (const kind of ['site-packages', 'dist-packages']) dirs.push(join(base, py, kind));
    }
  }
  return dirs.filter((d) => e.exists(join(d, 'nvidia')));
}

export function nvrtcCandidates(setting: string | undefined, e: CandidateEnv = realFs): Candidate[] {
  const out: Candidate[] = [];
  const explicit = setting ?? e.env['GPU_WORKBENCH_NVRTC_LIB'];
  if (explicit) out.push({ path: explicit, source: 'setting' });
  for (const root of toolkitRoots(e)) {
    for (const soname of NVRTC_SONAMES) out.push({ path: join(root.dir, 'lib64', soname), source: root.source });
  }
  for (const soname of NVRTC_SONAMES) out.push({ path: soname, source: 'loader path' });
  for (const dir of systemToolkits(e)) {
    for (const soname of NVRTC_SONAMES) out.push({ path: join(dir, 'lib64', soname), source: dir });
  }
  for (const site of sitePackages(e)) {
    // nvidia-cuda-nvrtc wheels: nvidia/cuda_nvrtc/lib (CUDA 12) and nvidia/cu13/lib (CUDA 13).
    for (const pkg of e.list(join(site, 'nvidia'))) {
      const lib = join(site, 'nvidia', pkg, 'lib');
      for (const name of e
        .list(lib)
        .filter((n) => /^libnvrtc\.so(\.\d+)*$/.test(n))
        .sort()
        .reverse()) {
        out.push({ path: join(lib, name), source: 'python wheel' });
      }
    }
  }
  return dedupe(out);
}

/** Libraries the NVIDIA driver installs: a setting, then the loader, then the usual system folders. */
function driverLibraryCandidates(soname: string, settingKey: string, e: CandidateEnv): Candidate[] {
  const out: Candidate[] = [];
  if (e.env[settingKey]) out.push({ path: e.env[settingKey], source: 'setting' });
  out.push({ path: soname, source: 'loader path' });
  for (const dir of ['/usr/lib/x86_64-linux-gnu', '/usr/lib64', '/usr/local/nvidia/lib64', '/usr/lib/wsl/lib'])
    out.push({ path: join(dir, soname), source: 'system' });
  return dedupe(out);
}

export const driverCandidates = (e: CandidateEnv = realFs): Candidate[] => driverLibraryCandidates('libcuda.so.1', 'GPU_WORKBENCH_CUDA_LIB', e);
export const nvmlCandidates = (e: CandidateEnv = realFs): Candidate[] => driverLibraryCandidates('libnvidia-ml.so.1', 'GPU_WORKBENCH_NVML_LIB', e);

function dedupe(candidates: Candidate[]): Candidate[] {
  const seen = new Set<string>();
  return candidates.filter((c) => (seen.has(c.path) ? false : (seen.add(c.path), true)));
}
