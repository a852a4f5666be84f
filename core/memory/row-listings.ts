/**
 * The processes listed at some rows of a batch of samples (the rest listed none): how a sampling thread's
 * batch carries them beside its rows, and how the store and the summary take them in, row by row.
 */
import type { ProcessMemorySample } from './samples';

export interface RowListing {
  row: number;
  /** null where no device's processes could be listed. */
  processes: ProcessMemorySample[] | null;
}

/**
 * A reader of `listings` (in row order) for rows asked in increasing order: the processes listed at row i,
 * or null where that row listed none. One pass over the listings, however many rows.
 */
export function listingsByRow(listings: readonly RowListing[]): (row: number) => ProcessMemorySample[] | null {
  let next = 0;
  return (row) => {
    while (next < listings.length && listings[next]!.row < row) next++;
    return next < listings.length && listings[next]!.row === row ? listings[next]!.processes : null;
  };
}
