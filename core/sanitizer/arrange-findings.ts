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

/** What happened on the device (a kernel finding names a device place), before what happened on the host. */
const onDevice = (g: FindingGroup): boolean => g.where !== null;

export function arrangeFindings(all: readonly SanitizerFinding[]): ArrangedFindings {
  const heldFindings = new Map<MemoryHolder, SanitizerFinding[]>();
  const rest: SanitizerFinding[] = [];
  for (const f of all) {
    const holder = heldBy(f);
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
 * is), and kernel findings first. Without a kernel fault the API errors stay findings: the fault that killed the
 * context was one this tool does not see, and they are the only trace of it.
 */
export function foldAfterFault(groups: readonly FindingGroup[], firstFault: SanitizerFinding | null): FindingGroup[] {
  const fault = firstFault === null ? undefined : groups.find((g) => g.example === firstFault);
  const folded = fault ? groups.filter(followsFault) : [];
  const kept = groups.filter((g) => !folded.includes(g)).map((g) => (g === fault ? { ...g, followedBy: [...(g.followedBy ?? []), ...folded] } : g));
  // A stable sort: within the device's findings and the host's, groupFindings's order (errors, then the most frequent).
  return [...kept].sort((a, b) => Number(onDevice(b)) - Number(onDevice(a)));
}
