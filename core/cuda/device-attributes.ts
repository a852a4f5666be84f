import { DEVICE_ATTRIBUTES } from './device-attributes.generated';

export interface AttributeInfo {
  id: number;
  /** CU_DEVICE_ATTRIBUTE_ prefix removed: MAX_THREADS_PER_BLOCK. */
  name: string;
  doc: string;
}

/** One entry per attribute id (the first name the header gives it). */
export const ATTRIBUTES: readonly AttributeInfo[] = (() => {
  const seen = new Set<number>();
  const out: AttributeInfo[] = [];
  for (const a of DEVICE_ATTRIBUTES) {
    if (seen.has(a.value)) continue;
    seen.add(a.value);
    out.push({ id: a.value, name: a.name.replace(/^CU_DEVICE_ATTRIBUTE_/, ''), doc: a.doc });
  }
  return out;
})();

export const ATTRIBUTE_IDS: readonly number[] = ATTRIBUTES.map((a) => a.id);
