/**
 * What to do about an out-of-memory, from its arithmetic: the request against the whole device, against what
 * was free, and against what the failing process itself held (live tensors, and a caching allocator's unused
 * cache). A request larger than the device is a wrong size, and no allocator setting helps; one that the cache
 * could have served is fragmentation; one that freeing the process's own tensors would make room for is the
 * program's working set; one that needs what other processes hold is the machine's. Rules in priority order,
 * each a function from the facts to advice or nothing (ARCHITECTURE 4b); the first that speaks is the advice.
 */
import { formatBytes, thousands } from '../format';

export interface OomFacts {
  requestedBytes: number;
  /** Free on the device when it failed; NaN when not recorded. */
  freeBytes: number;
  /** The device's whole memory; NaN when not known (a PyTorch snapshot does not record it). */
  totalBytes: number;
  /** What the failing process's allocator had handed out (live tensors, the plan's buffers); NaN when not known. */
  allocatedBytes: number;
  /** What it held from the device, its unused cache included (PyTorch's reserved; a plain CUDA program: its allocations); NaN when not known. */
  reservedBytes: number;
  /** Where it was asked, in words ("<stdin>:7", "step 3 (alloc x)"); null when not known. */
  where: string | null;
  /** PyTorch's caching allocator, or plain CUDA allocations (a plan's cuMemAlloc). */
  allocator: 'pytorch' | 'cuda';
}

export type OomRule = 'larger-than-device' | 'larger-than-any-gpu' | 'cache-fragmented' | 'own-memory' | 'other-processes' | 'not-recorded';

export interface OomAdvice {
  rule: OomRule;
  /** One sentence with the figures. */
  headline: string;
  /** What to do, most likely first. */
  steps: string[];
}

/**
 * More memory than any single GPU had when this was written (2025: the largest, NVIDIA's B300 and AMD's MI355X,
 * have 288 GB). A request past it cannot fit on any device, whatever this one's size — for snapshots, which do
 * not record the device's size.
 */
export const ANY_GPU_MAX_BYTES = 1024 ** 4;

const ratio = (a: number, b: number): string => {
  const r = a / b;
  return r >= 10 ? `${thousands(Math.round(r))}×` : `${r.toFixed(2)}×`;
};

const at = (f: OomFacts) => (f.where ? ` at ${f.where}` : '');

function wrongSize(f: OomFacts): string[] {
  return [
    f.allocator === 'pytorch'
      ? `The size is wrong, not the memory: print the shape and dtype of the tensor made${at(f)}. Usual causes: a dimension multiplied in twice, an element count used as a byte count, a broadcast or outer product that was not meant (adding a [N, 1] and an [N] tensor makes [N, N]).`
      : `The size is wrong, not the memory: check the buffer's element count and type${at(f)} (an element count used as a byte count, a dimension multiplied in twice).`,
    'If the size is right, the work does not fit one device: process it in chunks, or spread it over several GPUs.',
  ];
}

type Rule = (f: OomFacts) => OomAdvice | null;

/** The rules, first match wins. */
export const OOM_RULES: readonly Rule[] = [
  function largerThanDevice(f) {
    if (!(f.totalBytes > 0) || f.requestedBytes <= f.totalBytes) return null;
    return {
      rule: 'larger-than-device',
      headline: `Asked for ${formatBytes(f.requestedBytes)} on a GPU of ${formatBytes(f.totalBytes)}${at(f)}: no setting can make this fit — it is ${ratio(f.requestedBytes, f.totalBytes)} the whole device.`,
      steps: wrongSize(f),
    };
  },
  function largerThanAnyGpu(f) {
    if (f.totalBytes > 0 || f.requestedBytes <= ANY_GPU_MAX_BYTES) return null;
    const free = f.freeBytes >= 0 ? ` with ${formatBytes(f.freeBytes)} free (${ratio(f.requestedBytes, f.freeBytes)} what was free)` : '';
    return {
      rule: 'larger-than-any-gpu',
      headline: `Asked for ${formatBytes(f.requestedBytes)}${at(f)} on a GPU${free}: no setting can make this fit — no GPU has that much memory (the largest have 288 GB).`,
      steps: wrongSize(f),
    };
  },
  function notRecorded(f) {
    if (f.freeBytes >= 0) return null;
    return {
      rule: 'not-recorded',
      headline: `Asked for ${formatBytes(f.requestedBytes)}${at(f)}; how much was free was not recorded.`,
      steps: [
        'Compare the request with the device’s free and total memory (nvidia-smi, or torch.cuda.mem_get_info()) just before this point.',
        ...generalSteps(f),
      ],
    };
  },
  function cacheFragmented(f) {
    const cached = f.reservedBytes - f.allocatedBytes;
    if (f.allocator !== 'pytorch' || !(cached > 0) || f.requestedBytes > f.freeBytes + cached) return null;
    return {
      rule: 'cache-fragmented',
      headline: `Asked for ${formatBytes(f.requestedBytes)}${at(f)} with ${formatBytes(f.freeBytes)} free, while PyTorch's cache held ${formatBytes(cached)} reserved but unused: together enough, but not in one piece — the cache is fragmented.`,
      steps: [
        'Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before the program starts, so the cache can grow a segment instead of needing a new one.',
        'Or call torch.cuda.empty_cache() before this point, to hand the unused cache back to the device.',
      ],
    };
  },
  function ownMemory(f) {
    const held = f.reservedBytes >= 0 ? f.reservedBytes : f.allocatedBytes;
    if (!(held > 0) || f.requestedBytes > f.freeBytes + held) return null;
    const cached = f.reservedBytes - f.allocatedBytes;
    const need = f.requestedBytes - f.freeBytes - (cached > 0 ? cached : 0);
    const whose = f.allocator === 'pytorch' ? 'your live tensors' : "the run's own buffers";
    return {
      rule: 'own-memory',
      headline: `Asked for ${formatBytes(f.requestedBytes)}${at(f)} with ${formatBytes(f.freeBytes)} free; ${whose} held ${formatBytes(f.allocatedBytes >= 0 ? f.allocatedBytes : held)}: it fits once ${formatBytes(Math.max(need, 0))} of them is freed.`,
      steps:
        f.allocator === 'pytorch'
          ? [
              'Free what is no longer needed before this point (del the tensor, and drop every reference to it: outputs kept for logging, a list of losses with their graphs).',
              'Or need less at once: smaller batches, activation checkpointing, lower precision (bfloat16), or in-place operations.',
            ]
          : ['Free the buffers no longer needed before this step, or make them smaller.'],
    };
  },
  function otherProcesses(f) {
    const own = f.reservedBytes >= 0 ? f.reservedBytes : 0;
    if (!(f.totalBytes > 0) || f.requestedBytes > f.totalBytes) return null;
    const others = Math.max(0, f.totalBytes - f.freeBytes - own);
    return {
      rule: 'other-processes',
      headline: `Asked for ${formatBytes(f.requestedBytes)}${at(f)} on a GPU of ${formatBytes(f.totalBytes)} with ${formatBytes(f.freeBytes)} free: this process held ${formatBytes(own)}, and ${formatBytes(others)} was held by other processes (and this one's CUDA context).`,
      steps: [
        'See who holds the rest (nvidia-smi, or the Monitor here) and stop what should not be running, or run on another GPU (CUDA_VISIBLE_DEVICES).',
        ...generalSteps(f),
      ],
    };
  },
];

function generalSteps(f: OomFacts): string[] {
  return f.allocator === 'pytorch'
    ? ['Or need less at once: smaller batches, activation checkpointing, lower precision.']
    : ['Or make the buffers smaller, or process the data in chunks.'];
}

/** The advice for an out-of-memory: the first rule that speaks, else the general one. */
export function oomAdvice(f: OomFacts): OomAdvice {
  for (const rule of OOM_RULES) {
    const advice = rule(f);
    if (advice) return advice;
  }
  return {
    rule: 'other-processes',
    headline: `Asked for ${formatBytes(f.requestedBytes)}${at(f)} with ${formatBytes(f.freeBytes)} free${f.reservedBytes >= 0 ? ` and this process holding ${formatBytes(f.reservedBytes)}` : ''}: even with all of its own memory freed it would not fit; it needs memory other processes held, or a larger GPU.`,
    steps: ['See who holds the device’s memory (nvidia-smi, or the Monitor here).', ...generalSteps(f)],
  };
}

/** The advice as the lines of a marker's detail: the headline, then "What to do:" and the steps. */
export function adviceLines(a: OomAdvice): string[] {
  return [a.headline, 'What to do:', ...a.steps.map((s) => `  ${s}`)];
}
