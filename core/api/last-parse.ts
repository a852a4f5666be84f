import type * as z from 'zod';

/** Deeper than any message a schema of ours passes: past it, values are not compared (and so not equal). */
const MAX_DEPTH = 64;

/**
 * Whether two values as they cross a process boundary (structured clone or JSON) hold the same data: plain objects
 * with the same own keys, arrays of the same length, Uint8Arrays of the same bytes, and primitives that are the same
 * value (Object.is: -0 is not 0, NaN is NaN). Anything else (a Map, a Date, another typed array, an object with another
 * prototype) is never equal to anything, nor is a key named `__proto__`, which reads as the prototype.
 *
 * `known` is a value a schema passed: the walk follows its shape, so a hostile `value` costs at most its size.
 */
export function sameData(value: unknown, known: unknown, depth = 0): boolean {
  if (Object.is(value, known)) return true;
  if (typeof value !== 'object' || typeof known !== 'object' || value === null || known === null || depth > MAX_DEPTH) return false;
  if (Array.isArray(known)) {
    if (!Array.isArray(value) || value.length !== known.length) return false;
    for (let i = 0; i < known.length; i++) if (!sameData(value[i], known[i], depth + 1)) return false;
    return true;
  }
  if (known instanceof Uint8Array) return value instanceof Uint8Array && sameBytes(value, known);
  if (!isPlainObject(known) || !isPlainObject(value)) return false;
  const keys = Object.keys(known);
  if (Object.keys(value).length !== keys.length) return false;
  for (const key of keys) {
    if (key === '__proto__' || !Object.hasOwn(value, key)) return false;
    if (!sameData((value as Record<string, unknown>)[key], (known as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  const n = a.byteLength;
  if (n !== b.byteLength) return false;
  // Four bytes at a time through DataViews, which read at any alignment: a module's image is kilobytes to megabytes.
  const da = new DataView(a.buffer, a.byteOffset, n);
  const db = new DataView(b.buffer, b.byteOffset, n);
  let i = 0;
  for (; i + 4 <= n; i += 4) if (da.getUint32(i) !== db.getUint32(i)) return false;
  for (; i < n; i++) if (da.getUint8(i) !== db.getUint8(i)) return false;
  return true;
}

export interface LastParseOptions<Output> {
  /**
   * One top-level field that differs between otherwise equal messages (a request's id): it is left out of the
   * comparison and checked on its own by its schema, which must be the rule the whole schema applies to it.
   */
  varying?: { field: string; schema: z.ZodType };
  /**
   * What is compared with later inputs, and parsed: the input itself where nothing else holds it (a message just
   * received), or a copy where its caller could change it afterwards. The copy is made before the parse, so what is
   * remembered is what was parsed; an input that cannot be copied is parsed as it is and not remembered.
   */
  keep?: (input: unknown) => unknown;
  /** Which parsed values are worth remembering (the costly ones); by default all. Others leave the memory as it is. */
  remember?: (output: Output) => boolean;
  /** How many values are remembered, the most recent first (default 1): two plans run in turn are both remembered. */
  capacity?: number;
}

interface Remembered<Output> {
  input: unknown;
  output: Output;
}

/**
 * A schema's parse that remembers the last values it passed: the same data again (sameData) gets the same parsed value
 * back without the schema's walk, which for a launch plan is most of what a re-run's request costs the runner. Only a
 * success is remembered. The value handed back is shared between the calls that receive it: callers must not change
 * it. A new input is compared with each remembered one before it is parsed; each comparison stops at the first
 * difference.
 */
export class LastParse<S extends z.ZodType> {
  private remembered: Remembered<z.output<S>>[] = [];

  constructor(
    private readonly schema: S,
    private readonly options: LastParseOptions<z.output<S>> = {},
  ) {}

  safeParse(input: unknown): z.ZodSafeParseResult<z.output<S>> {
    for (let i = 0; i < this.remembered.length; i++) {
      const entry = this.remembered[i]!;
      const again = this.again(input, entry);
      if (!again) continue;
      this.remembered.splice(i, 1);
      this.remembered.unshift(entry);
      return again;
    }
    const kept = this.kept(input);
    const result = this.schema.safeParse(kept.ok ? kept.value : input) as z.ZodSafeParseResult<z.output<S>>;
    if (result.success && kept.ok && (this.options.remember?.(result.data) ?? true)) {
      this.remembered.unshift({ input: kept.value, output: result.data });
      this.remembered.length = Math.min(this.remembered.length, Math.max(1, this.options.capacity ?? 1));
    }
    return result;
  }

  private kept(input: unknown): { ok: true; value: unknown } | { ok: false } {
    if (!this.options.keep) return { ok: true, value: input };
    try {
      return { ok: true, value: this.options.keep(input) };
    } catch {
      return { ok: false };
    }
  }

  /** The remembered value for the same data again (its varying field from this input), or null. */
  private again(input: unknown, last: Remembered<z.output<S>>): z.ZodSafeParseResult<z.output<S>> | null {
    const { varying } = this.options;
    if (!varying) return sameData(input, last.input) ? { success: true, data: last.output } : null;
    if (typeof input !== 'object' || input === null || Array.isArray(input) || !isPlainObject(input)) return null;
    const known = last.input as Record<string, unknown>;
    if (!sameData({ ...input, [varying.field]: known[varying.field] }, known)) return null;
    const field = varying.schema.safeParse((input as Record<string, unknown>)[varying.field]);
    return field.success ? { success: true, data: { ...(last.output as object), [varying.field]: field.data } as z.output<S> } : null;
  }
}
