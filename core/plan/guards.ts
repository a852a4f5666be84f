/**
 * Guard regions: the runner allocates every buffer with `guardBytes` of a known pattern before and after
 * it and hands the kernel a pointer to the inside. A kernel that writes into a guard wrote out of
 * bounds — an off-by-one, a missing bounds check — which the hardware does not catch for writes that
 * land in mapped memory. What compute-sanitizer's memcheck finds exactly, at no cost to the launch.
 */
export const GUARD_PATTERN = 0xa5;
/** Fills allocations the plan has not initialised, so a kernel that reads them sees NaN or −1, not a lucky 0. */
export const POISON_BYTE = 0xff;

export interface GuardDamage {
  side: 'before' | 'after';
  /** Bytes of the guard that no longer hold the pattern. */
  bytesChanged: number;
  /** Nearest changed byte to the buffer, in elements from its start (−1 is the element before it; count is the one after it). */
  nearestElement: number;
  /** Farthest changed byte, in elements from the buffer's start. */
  farthestElement: number;
}

/**
 * Which guard bytes changed. `before` ends where the buffer starts and `after` begins where it ends;
 * element indices are relative to the buffer's first element.
 */
export function findGuardDamage(before: Uint8Array, after: Uint8Array, elementSize: number, count: number): GuardDamage[] {
  const damage: GuardDamage[] = [];
  let changed = 0;
  let nearest = -1;
  let farthest = -1;
  for (let i = 0; i < before.length; i++) {
    if (before[i] !== GUARD_PATTERN) {
      changed++;
      if (farthest < 0) farthest = i;
      nearest = i;
    }
  }
  if (changed) {
    const element = (byte: number) => -Math.ceil((before.length - byte) / elementSize);
    damage.push({ side: 'before', bytesChanged: changed, nearestElement: element(nearest), farthestElement: element(farthest) });
  }
  changed = 0;
  nearest = -1;
  farthest = -1;
  for (let i = 0; i < after.length; i++) {
    if (after[i] !== GUARD_PATTERN) {
      changed++;
      if (nearest < 0) nearest = i;
      farthest = i;
    }
  }
  if (changed) {
    const element = (byte: number) => count + Math.floor(byte / elementSize);
    damage.push({ side: 'after', bytesChanged: changed, nearestElement: element(nearest), farthestElement: element(farthest) });
  }
  return damage;
}
