import { thousands } from '../format';
import type { AllocationRecord } from '../runner/run-result';
import type { SanitizerFinding } from './findings';

export interface NamedAddress {
  buffer: string;
  /** Bytes from the buffer: past its end ('after'), before its start ('before'), or into it ('inside'). */
  side: 'before' | 'after' | 'inside';
  distance: number;
  allocatedAtStep: number;
  /** Set when the access came after the plan freed the buffer. */
  freedAtStep: number | null;
  sentence: string;
}

const parseAddress = (text: string | null | undefined): bigint | null => {
  if (!text || !/^0x[0-9a-f]+$/i.test(text)) return null;
  return BigInt(text);
};

const bytes = (n: number) => `${thousands(n)} byte${n === 1 ? '' : 's'}`;

/**
 * The address a tool reported, said against the plan's buffers: "4 bytes past the end of `out` (allocated at
 * step 2)". The buffer that holds it, else the nearest one (an overrun lands past its own buffer's end; a
 * freed buffer's range still names a use after free). Null when no buffer is within `reach` bytes.
 */
export function nameAddress(address: string | null | undefined, memory: readonly AllocationRecord[], reach = 2 ** 20): NamedAddress | null {
  const at = parseAddress(address);
  if (at === null) return null;
  let best: { record: AllocationRecord; side: NamedAddress['side']; distance: bigint } | null = null;
  for (const record of memory) {
    const start = parseAddress(record.address);
    if (start === null) continue;
    const end = start + BigInt(record.bytes);
    const candidate =
      at < start
        ? { record, side: 'before' as const, distance: start - at }
        : at >= end
          ? { record, side: 'after' as const, distance: at - end }
          : { record, side: 'inside' as const, distance: at - start };
    const rank = (c: typeof candidate) => (c.side === 'inside' ? -1n : c.distance);
    // Inside a live buffer beats inside a freed one at the same place (the allocator reuses addresses).
    if (!best || rank(candidate) < rank(best) || (rank(candidate) === rank(best) && best.record.freedAtStep !== null && record.freedAtStep === null))
      best = candidate;
  }
  if (!best || (best.side !== 'inside' && best.distance > BigInt(reach))) return null;
  const { record, side } = best;
  const distance = Number(best.distance);
  const where =
    side === 'inside'
      ? `${bytes(distance)} into \`${record.buffer}\``
      : side === 'after'
        ? distance === 0
          ? `just past the end of \`${record.buffer}\``
          : `${bytes(distance)} past the end of \`${record.buffer}\``
        : `${bytes(distance)} before the start of \`${record.buffer}\``;
  const when = `allocated at step ${record.allocatedAtStep + 1}${record.freedAtStep !== null ? `, freed at step ${record.freedAtStep + 1}` : ''}`;
  return { buffer: record.buffer, side, distance, allocatedAtStep: record.allocatedAtStep, freedAtStep: record.freedAtStep, sentence: `${where} (${when})` };
}

/** The access a finding made, against the plan's buffers; a memcheck address is its first byte. */
export function nameFindingAddress(finding: SanitizerFinding, memory: readonly AllocationRecord[]): NamedAddress | null {
  return nameAddress(finding.access?.address ?? finding.leak?.address ?? null, memory);
}
