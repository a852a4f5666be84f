import { formatBytes, plural, thousands } from '../format';
import type { FindingGroup, HostFrame, MemoryHolder, SanitizerFinding } from './findings';

/**
 * Memory the leak check reports that is not the user's leak: blocks an allocator (or the workbench's runner)
 * still held when the process ended. memcheck's `--leak-check full` reports every device allocation not freed
 * by then; PyTorch's caching allocator and CuPy's memory pool keep their blocks until the process ends, and a
 * runner after a sticky error cannot free its buffers. Which holder, from the allocation's host stack, by a
 * small table of rules in order (ARCHITECTURE.md §4b); a block none of them claims stays a leak.
 */

const basename = (path: string) => path.slice(path.lastIndexOf('/') + 1);

/** Frames of the workbench's own addon: the runner allocates every plan buffer through it. */
export const isWorkbenchRunnerFrame = (f: HostFrame): boolean => f.module !== null && basename(f.module) === 'gpu_workbench_native.node';

/** PyTorch's CUDACachingAllocator (in libc10_cuda.so): every tensor's device memory comes through it. */
export const isPyTorchAllocatorFrame = (f: HostFrame): boolean =>
  (f.func !== null && f.func.includes('c10::cuda::CUDACachingAllocator')) || (f.module !== null && basename(f.module).startsWith('libc10_cuda.so'));

/**
 * CuPy's cupy.cuda.memory (its Memory objects, its pools), by Cython's names for it (`__pyx_…_4cupy_4cuda_6memory_…`)
 * or its module's path, as the XML and the text name them.
 */
export const isCupyMemoryFrame = (f: HostFrame): boolean =>
  (f.func !== null && /^__pyx_\w*?_4cupy_4cuda_6memory_/.test(f.func)) || (f.module !== null && /\/cupy\/cuda\/memory\.[^/]*$/.test(f.module));

/** CuPy's memory pool (SingleDeviceMemoryPool, MemoryPool, MemoryAsyncPool), within cupy.cuda.memory. */
export const isCupyPoolFrame = (f: HostFrame): boolean => isCupyMemoryFrame(f) && f.func !== null && /MemoryPool|MemoryAsyncPool/.test(f.func);

export interface HolderRule {
  holder: MemoryHolder;
  /** Whether a leaked block's allocation stack shows this holder asked for it. */
  holds: (stack: readonly HostFrame[]) => boolean;
  /** "PyTorch's caching allocator": who held it, as a sentence names it. */
  label: string;
  /** Why it is not a leak of the user's, and what to do if the memory matters. */
  why: string;
}

/**
 * The rules in order: the first whose holder asked for the block claims it. The workbench first (a plan runs in
 * the runner whatever it calls), then the frameworks. CuPy's pool before CuPy's arrays: the pool's blocks also
 * pass through Memory. `cupy.cuda.runtime.malloc` called straight from the user's code passes through neither,
 * and stays the user's leak, as a ctypes cudaMalloc does.
 */
export const HOLDER_RULES: readonly HolderRule[] = [
  {
    holder: 'workbench-runner',
    holds: (stack) => stack.some(isWorkbenchRunnerFrame),
    label: "the workbench's runner",
    why:
      "The workbench's runner frees every buffer of the plan at its end; after a sticky error the context is dead and nothing can be freed, " +
      'so the process exit returns them. A plan that never frees a buffer shows it in the run’s result, not here.',
  },
  {
    holder: 'pytorch-caching-allocator',
    holds: (stack) => stack.some(isPyTorchAllocatorFrame),
    label: "PyTorch's caching allocator",
    why:
      "PyTorch's caching allocator keeps its blocks (live tensors', and freed ones for reuse) until the process ends and does not free them at exit, " +
      'so the leak check counts them. torch.cuda.memory_summary() shows what it holds; PYTORCH_NO_CUDA_MEMORY_CACHING=1 turns the caching off.',
  },
  {
    holder: 'cupy-memory-pool',
    holds: (stack) => stack.some(isCupyPoolFrame),
    label: "CuPy's memory pool",
    why:
      "CuPy's memory pool keeps its blocks (live arrays', and freed ones for reuse) until the process ends, so the leak check counts them. " +
      'cupy.get_default_memory_pool().free_all_blocks() returns the unused ones.',
  },
  {
    holder: 'cupy-arrays',
    holds: (stack) => stack.some(isCupyMemoryFrame),
    label: 'CuPy arrays still alive',
    why:
      'CuPy frees an array’s memory when the array is collected, which need not happen before the process ends (an array at module level, ' +
      'one an exception kept; after a sticky error the free fails too), so the leak check counts it.',
  },
];

/** The holder of a leaked block, or null when none of the rules claims it (the user's own leak). */
export function heldBy(finding: SanitizerFinding): MemoryHolder | null {
  if (finding.kind !== 'leak') return null;
  return HOLDER_RULES.find((r) => r.holds(finding.hostStack))?.holder ?? null;
}

export const holderRule = (holder: MemoryHolder): HolderRule => HOLDER_RULES.find((r) => r.holder === holder)!;

/** Blocks one holder still held at exit, grouped as leaks are (by the user's line that asked for them). */
export interface HeldMemory {
  holder: MemoryHolder;
  bytes: number;
  /** The allocations the leak check reported (each one block). */
  blocks: number;
  groups: FindingGroup[];
}

const frameText = (f: HostFrame) => (f.file !== null ? `${basename(f.file)}${f.line !== null ? `:${f.line}` : ''}` : (f.func ?? '?'));

/** "Held by PyTorch's caching allocator at exit — not a leak of yours: 120,091,312,128 bytes (111.84 GiB) in 2 blocks, asked for at join.py:13, join.py:12." */
export function describeHeld(h: HeldMemory): string {
  const sites = [...new Set(h.groups.flatMap((g) => (g.userFrame ? [frameText(g.userFrame)] : [])))];
  const at = sites.length ? `, asked for at ${sites.slice(0, 4).join(', ')}${sites.length > 4 ? ` and ${thousands(sites.length - 4)} more places` : ''}` : '';
  const size = h.bytes >= 1024 ** 2 ? ` (${formatBytes(h.bytes)})` : '';
  return `Held by ${holderRule(h.holder).label} at exit — not a leak of yours: ${plural(h.bytes, 'byte')}${size} in ${plural(h.blocks, 'block')}${at}.`;
}

/** Why the held memory is not counted, one sentence per holder, for the report's details. */
export const heldDetails = (held: readonly HeldMemory[]): string[] => held.map((h) => `${describeHeld(h)} ${holderRule(h.holder).why}`);
