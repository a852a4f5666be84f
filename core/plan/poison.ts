import { elementReader } from './buffer-data';
import { elementSize, isFloatType, type ElementType } from './element-types';
import type { LaunchPlan } from './plan-schema';

/** What a read-back buffer still holds of the poison pattern, and where its NaNs start. */
export interface PoisonScan {
  /** Elements whose bytes are all 0xFF: nothing wrote them since allocation (or something copied poison into them). */
  poisonCount: number;
  firstPoisonIndex: number | null;
  /** NaN elements (floats only), poison included, and the first of them. */
  nanCount: number;
  firstNanIndex: number | null;
}

/** Counts elements made only of 0xFF bytes, a word at a time where the data is aligned for it. */
function countPoison(size: number, bytes: Uint8Array): { count: number; first: number | null } {
  const n = Math.floor(bytes.byteLength / size);
  let count = 0;
  let first: number | null = null;
  const aligned = bytes.byteOffset % Math.min(size, 4) === 0;
  if (aligned && (size === 4 || size === 8)) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, (n * size) / 4);
    const per = size / 4;
    for (let i = 0; i < n; i++) {
      let all = true;
      for (let w = 0; w < per; w++) if (words[i * per + w] !== 0xffffffff) all = false;
      if (all) {
        count++;
        if (first === null) first = i;
      }
    }
    return { count, first };
  }
  for (let i = 0; i < n; i++) {
    let all = true;
    for (let b = 0; b < size; b++) if (bytes[i * size + b] !== 0xff) all = false;
    if (all) {
      count++;
      if (first === null) first = i;
    }
  }
  return { count, first };
}

/**
 * Looks for the poison pattern in a read-back buffer. For floats the pattern is a NaN, so a buffer with
 * no NaN needs no scan; an integer buffer is scanned only when it started poisoned (-1 is a common value).
 */
export function scanPoison(type: ElementType, bytes: Uint8Array, nanCount: number, startedPoisoned: boolean): PoisonScan | null {
  const float = isFloatType(type);
  if (float ? nanCount === 0 : !startedPoisoned) return null;
  const { count, first } = countPoison(elementSize(type), bytes);
  let firstNanIndex: number | null = null;
  if (float) {
    const at = elementReader(type, bytes);
    const n = Math.floor(bytes.byteLength / elementSize(type));
    for (let i = 0; i < n && firstNanIndex === null; i++) if (Number.isNaN(at(i))) firstNanIndex = i;
  }
  if (count === 0 && firstNanIndex === null) return null;
  return { poisonCount: count, firstPoisonIndex: first, nanCount: float ? nanCount : 0, firstNanIndex };
}

/**
 * NaN in a first read-back against a second made with unwritten memory zeroed instead of poisoned: how
 * many were NaN, how many stayed NaN, and the first that became a number. Null when none were NaN.
 */
export function nanChange(
  type: ElementType,
  first: Uint8Array,
  second: Uint8Array,
): { nanInFirst: number; nanWithZeros: number; firstIndex: number | null } | null {
  if (!isFloatType(type)) return null;
  const a = elementReader(type, first);
  const b = elementReader(type, second);
  const n = Math.floor(Math.min(first.byteLength, second.byteLength) / elementSize(type));
  let nanInFirst = 0;
  let nanWithZeros = 0;
  let firstIndex: number | null = null;
  for (let i = 0; i < n; i++) {
    if (!Number.isNaN(a(i))) continue;
    nanInFirst++;
    if (Number.isNaN(b(i))) nanWithZeros++;
    else firstIndex ??= i;
  }
  return nanInFirst ? { nanInFirst, nanWithZeros, firstIndex } : null;
}

/**
 * Alloc steps whose buffer is uploaded before any launch or download touches it: poisoning them would be
 * moot, since the upload overwrites the pattern before anything could read it.
 */
export function allocStepsUploadedBeforeUse(plan: Pick<LaunchPlan, 'steps'>): Set<number> {
  const out = new Set<number>();
  plan.steps.forEach((step, index) => {
    if (step.op !== 'alloc') return;
    for (const later of plan.steps.slice(index + 1)) {
      if (later.op === 'upload' && later.buffer === step.buffer) {
        out.add(index);
        return;
      }
      const touches =
        later.op === 'launch' ? later.args.some((a) => 'buffer' in a && a.buffer === step.buffer) : 'buffer' in later && later.buffer === step.buffer;
      if (touches) return;
    }
  });
  return out;
}
