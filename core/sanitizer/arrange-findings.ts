import type { FindingGroup, MemoryHolder, SanitizerFinding } from './findings';
import { groupFindings, isStickyApiError } from './group';
import { heldBy, HOLDER_RULES, type HeldMemory } from './held-memory';

/**
 * The findings as a person fixes them, with the noise taken out: memory an allocator or the workbench held at
 * exit set apart (not a leak of the user's), the API errors a kernel fault left behind folded under it, and
 * what ran on the device first.
 */
export interface ArrangedFindings {
  /** The findings, one group per place: kernel findings first; folded API errors inside their fault's `followedBy`. */
  groups: FindingGroup[];
  /** Leak records no rule of HOLDER_RULES took out, with those folded: the findings that count. */
  findings: number;
  /** Memory still held at exit, per holder, in HOLDER_RULES's order; not findings. */
  held: HeldMemory[];
}

/** A fault that ends the kernel and leaves the context dead: an invalid access, an assert, a hardware exception. */
export const isKernelFault = (f: SanitizerFinding): boolean => f.where !== null && (f.kind === 'memory-access' || f.kind === 'device-error');

/** An API error that only says the context was already dead (a sticky error: 700, 710, 719, …). */
export const followsFault = (g: FindingGroup): boolean => g.kind === 'api-error' && g.example.api !== null && isStickyApiError(g.example.api);

/** Kinds only a kernel reports: what happened on the device, even where the tool named no place for it (an imprecise fault). */
const KERNEL_KINDS: ReadonlySet<FindingGroup['kind']> = new Set(['memory-access', 'device-error', 'uninitialised-read', 'race', 'barrier']);

/** A kernel finding: a device kind, or any finding that names a device place. */
export const isKernelFinding = (g: Pick<FindingGroup, 'kind' | 'where'>): boolean => KERNEL_KINDS.has(g.kind) || g.where !== null;

/**
 * Where a group goes in the list, as a person fixes them: what the kernels did first (an API error a fault left
 * behind says "fix the kernel finding first", so that finding must be above it), then the host's other errors,
 * then leaks.
 */
export const findingRank = (g: Pick<FindingGroup, 'kind' | 'where'>): number => (isKernelFinding(g) ? 0 : g.kind === 'leak' ? 2 : 1);

export interface ArrangeOptions {
  /**
   * The program under the tool is the workbench's own runner (a plan re-run under compute-sanitizer): every block
   * still allocated at exit is a plan buffer the runner could not free after a sticky error, whatever frames the
   * tool saved for it. A plan that never frees a buffer is said by the run's result, not by the leak check.
   */
  runner?: boolean;
}

export function arrangeFindings(all: readonly SanitizerFinding[], options: ArrangeOptions = {}): ArrangedFindings {
  const heldFindings = new Map<MemoryHolder, SanitizerFinding[]>();
  const rest: SanitizerFinding[] = [];
  for (const f of all) {
    const holder = options.runner && f.kind === 'leak' ? 'workbench-runner' : heldBy(f);
    if (holder === null) rest.push(f);
    else {
      let list = heldFindings.get(holder);
      if (!list) heldFindings.set(holder, (list = []));
      list.push(f);
    }
  }
  const held = HOLDER_RULES.flatMap(({ holder }): HeldMemory[] => {
    const found = heldFindings.get(holder);
    if (!found) return [];
    const groups = groupFindings(found).map((g) => ({ ...g, heldBy: holder }));
    return [{ holder, bytes: groups.reduce((n, g) => n + g.leakedBytes, 0), blocks: found.length, groups }];
  });
  return { groups: foldAfterFault(groupFindings(rest), rest.find(isKernelFault) ?? null), findings: rest.length, held };
}

/**
 * The groups with every sticky API error folded under the first kernel fault (the group whose first record it
 * is), kernel findings first and leaks last (findingRank). Without a kernel fault the API errors stay findings: the fault that killed the
 * context was one this tool does not see, and they are the only trace of it.
 */
export function foldAfterFault(groups: readonly FindingGroup[], firstFault: SanitizerFinding | null): FindingGroup[] {
  const fault = firstFault === null ? undefined : groups.find((g) => g.example === firstFault);
  const folded = fault ? groups.filter(followsFault) : [];
  const kept = groups.filter((g) => !folded.includes(g)).map((g) => (g === fault ? { ...g, followedBy: [...(g.followedBy ?? []), ...folded] } : g));
  // A stable sort: within each rank, groupFindings's order (errors, then the most frequent).
  return [...kept].sort((a, b) => findingRank(a) - findingRank(b));
}
