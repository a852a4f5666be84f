import { checkSavedOutcome } from '../../core/runner/result-file';
import { decodeTimeline } from '../../core/memory/timeline-wire';
import { SNAPSHOT_MAX_BYTES } from '../../main/memory/snapshot-protocol';
import { readMemoryTimelines } from '../../main/readers/memory-reader';
import { PlanFileError, readRunOutcome } from '../../main/services/plan-files';
import { mutate, pick, TEXT } from './mutate';
import { DisagreementError, fixtures, type FuzzTarget } from './target';
import { acrossReader } from '../helpers/across-reader';

/**
 * A saved run result, read as run.open reads it (counted, parsed, checked for what the views read) and as memory.open
 * does (its event log as a memory timeline); then what the host and the view do with each answer.
 */
export function resultTarget(): FuzzTarget {
  let seeds: Uint8Array[] = [];
  return {
    file: 'input.json',
    load: async () => {
      seeds = fixtures(['runs', 'legacy'], '.json');
    },
    mutant: (rng) => mutate(rng, pick(rng, seeds), seeds, TEXT),
    read: async (path) => {
      let outcome: string;
      try {
        const read = await readRunOutcome(path);
        if (!checkSavedOutcome(JSON.parse(JSON.stringify(read))).ok) throw new DisagreementError('the host refuses the result the reader accepted');
        outcome = 'accepted';
      } catch (error) {
        if (!(error instanceof PlanFileError)) throw error;
        outcome = 'refused: PlanFileError';
      }
      const memory = await readMemoryTimelines({ path, maxBytes: SNAPSHOT_MAX_BYTES }, () => undefined);
      if (!memory.ok) return `${outcome}; memory ${memory.kind}`;
      for (const wire of acrossReader(memory.result).timelines) decodeTimeline(wire);
      return `${outcome}; memory accepted`;
    },
  };
}
