/**
 * The one LRU cache: a map that keeps its most recently used entries within a capacity (a count, or bytes with
 * `sizeOf`), dropping the least recently used first and telling `onEvict`. One entry larger than the whole
 * capacity is not kept.
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();
  private total = 0;

  constructor(
    private readonly capacity: number,
    private readonly sizeOf: (value: V) => number = () => 1,
    private readonly onEvict: (key: K, value: V) => void = () => undefined,
  ) {
    if (!(capacity >= 1)) throw new RangeError(`capacity must be at least 1, not ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // Map keeps insertion order: re-inserting makes this the most recent.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** Holds the value, the least recently used going first past the bound; false when the value alone is over it (not held). */
  set(key: K, value: V): boolean {
    this.delete(key);
    if (this.sizeOf(value) > this.capacity) return false;
    this.entries.set(key, value);
    this.total += this.sizeOf(value);
    for (const [k, v] of this.entries) {
      if (this.total <= this.capacity) break;
      this.entries.delete(k);
      this.total -= this.sizeOf(v);
      this.onEvict(k, v);
    }
    return true;
  }

  delete(key: K): void {
    const value = this.entries.get(key);
    if (value === undefined) return;
    this.entries.delete(key);
    this.total -= this.sizeOf(value);
  }
}
