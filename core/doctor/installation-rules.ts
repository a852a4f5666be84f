import type { DoctorCheck } from '../discovery';
import { formatCudaVersion } from '../format';
import { notRun, whyMissing } from './check-helpers';
import { nvccCudaVersion } from './compiler-rules';
import type { DoctorFacts, ToolkitFact } from './facts';

/**
 * Several CUDA installations are common and harmless; what bites is using two at once: the editor's NVRTC from
 * one and `nvcc` from another (a kernel that builds in one fails in the other), or CUDA_HOME naming a toolkit
 * other than the nvcc in use (CMake's FindCUDAToolkit and PyTorch's extension builder read CUDA_HOME).
 */

const under = (path: string, root: string) => path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`);

/** The installation a file lies in (the longest root that holds it), by resolved paths. */
export function toolkitHolding(toolkits: readonly ToolkitFact[], realPath: string | null): ToolkitFact | null {
  if (!realPath) return null;
  const holders = toolkits.filter((t) => t.realRoot && under(realPath, t.realRoot));
  return holders.sort((a, b) => b.realRoot!.length - a.realRoot!.length)[0] ?? null;
}

const describe = (t: ToolkitFact) => `${t.root}${t.realRoot && t.realRoot !== t.root ? ` (→ ${t.realRoot})` : ''}${t.version ? ` ${t.version}` : ''}`;
const short = (v: number | null) => (v === null ? null : formatCudaVersion(v));

export function installationChecks(facts: DoctorFacts): DoctorCheck[] {
  const base = { id: 'cuda-installations', area: 'compilers' as const, title: 'CUDA installations' };
  const c = facts.installations;
  if (c.status !== 'ok') return [notRun(base.id, base.area, base.title, whyMissing(c)!)];
  const { toolkits, nvccRealPath, nvrtcRealPath } = c.value;
  // One folder found two ways (/usr/local/cuda and CUDA_HOME=/usr/local/cuda) is one installation.
  const distinct = toolkits.filter((t, i) => t.realRoot !== null && toolkits.findIndex((u) => u.realRoot === t.realRoot) === i);
  const nvccHome = toolkitHolding(distinct, nvccRealPath);
  const nvrtcHome = toolkitHolding(distinct, nvrtcRealPath);
  const problems: { detail: string; remedy: string }[] = [];

  const nvccVersion = nvccCudaVersion(facts.discovery.nvcc.found ? facts.discovery.nvcc.version : null);
  const nvrtcVersion = facts.discovery.nvrtc.loaded ? (facts.discovery.nvrtc.version ?? null) : null;
  if (nvccRealPath && nvrtcRealPath && nvccVersion !== null && nvrtcVersion !== null && short(nvccVersion) !== short(nvrtcVersion))
    problems.push({
      detail: `nvcc is CUDA ${short(nvccVersion)} (${nvccRealPath}) but NVRTC is CUDA ${short(nvrtcVersion)} (${nvrtcRealPath}): the editor compiles with one and \`nvcc\` builds with the other, so a kernel can build in one and not the other.`,
      remedy:
        'Use one toolkit for both: set CUDA_HOME to it (the workbench looks there first for nvcc and NVRTC), or GPU_WORKBENCH_NVRTC_LIB and GPU_WORKBENCH_NVCC.',
    });
  for (const variable of ['CUDA_HOME', 'CUDA_PATH'] as const) {
    const value = variable === 'CUDA_HOME' ? c.value.cudaHome : c.value.cudaPath;
    if (!value) continue;
    const named = toolkits.find((t) => t.foundAs === variable);
    if (!named?.realRoot)
      problems.push({
        detail: `${variable}=${value} names a folder that does not exist: builds that read it (CMake, PyTorch extensions) find no toolkit.`,
        remedy: `Point ${variable} at an installed toolkit (${distinct.map((t) => t.root).join(', ') || 'none found'}), or unset it.`,
      });
    else if (nvccHome && nvccHome.realRoot !== named.realRoot)
      problems.push({
        detail: `${variable}=${value} is one toolkit, but the nvcc in use is ${nvccRealPath} (${describe(nvccHome)}): builds that read ${variable} (CMake's FindCUDAToolkit, PyTorch's extension builder) and \`nvcc\` use different toolkits.`,
        remedy: `Make them agree: put ${value}/bin first on PATH, or set ${variable} to ${nvccHome.root}.`,
      });
  }

  const where = (what: string, path: string | null, home: ToolkitFact | null) => (path ? `${what} from ${home ? home.root : path}` : `no ${what}`);
  const summary =
    `${distinct.length === 0 ? 'No CUDA toolkit found' : `${distinct.length === 1 ? 'One CUDA toolkit' : `${distinct.length} CUDA toolkits`}: ${distinct.map(describe).join('; ')}`}` +
    ` (looked in /usr/local/cuda*, CUDA_HOME, CUDA_PATH and Python's site-packages/nvidia). In use: ${where('nvcc', nvccRealPath, nvccHome)}, ${where('NVRTC', nvrtcRealPath, nvrtcHome)}.`;
  if (!problems.length) return [{ ...base, status: 'ok', detail: summary, remedy: null }];
  return [
    { ...base, status: 'warn', detail: `${problems.map((p) => p.detail).join(' ')} ${summary}`, remedy: [...new Set(problems.map((p) => p.remedy))].join(' ') },
  ];
}
