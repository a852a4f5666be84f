import { aliveAt, beforeRecording, groupByUserFrame, oomEvents, type SnapshotModel } from '../memory/snapshot-model';
import type { OomPicture } from './evidence';

/** No picture, and why: the numbers unknown rather than zero. */
export const noPicture = (snapshotPath: string | null, missing: string): OomPicture => ({
  snapshotPath,
  requestedBytes: null,
  aliveByLine: [],
  allocatedBytes: null,
  reservedBytes: null,
  largestFreeInCacheBytes: null,
  freeInCacheBytes: null,
  missing,
});

/**
 * What PyTorch's allocator held when the allocation failed, from a snapshot dumped at that moment: the live
 * tensors by the program's line that allocated them, the cache's free pieces (is it fragmentation?), the request.
 */
export function oomPicture(model: SnapshotModel, snapshotPath: string | null): OomPicture {
  const withOom = model.devices.map((t) => ({ t, ooms: oomEvents(model, t) })).find((d) => d.ooms.length > 0);
  if (!withOom) return noPicture(snapshotPath, 'the snapshot holds no out-of-memory event: the re-run did not fail the same way.');
  const { t, ooms } = withOom;
  const oom = ooms[0]!;
  const alive = [...beforeRecording(model, t), ...aliveAt(model, t, oom.index - 1)];
  const groups = groupByUserFrame(alive);
  const freePieces = model.segments.filter((s) => s.device === t.device).flatMap((s) => s.blocks.filter((b) => b.state === 'inactive').map((b) => b.size));
  return {
    snapshotPath,
    requestedBytes: oom.request,
    aliveByLine: groups.map((g) => ({
      frame: g.frame ? { file: g.frame.filename, line: g.frame.line, function: g.frame.name, code: null } : null,
      bytes: g.bytes,
      count: g.count,
    })),
    allocatedBytes: oom.allocated,
    reservedBytes: oom.reserved,
    largestFreeInCacheBytes: freePieces.length ? Math.max(...freePieces) : 0,
    freeInCacheBytes: freePieces.reduce((a, b) => a + b, 0),
    missing: null,
  };
}
