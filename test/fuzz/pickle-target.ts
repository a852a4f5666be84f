import { readFileSync } from 'node:fs';

import { PickleRedactionError, redactPickleStrings } from '../../core/memory/redact-pickle';
import { decodeSnapshotColumns } from '../../core/memory/snapshot-columns';
import { summarize } from '../../core/memory/snapshot-model';
import { decodeTimeline } from '../../core/memory/timeline-wire';
import { unpickle } from '../../core/memory/unpickle';
import { renderMemorySummary } from '../../main/cli/memory-command';
import { SNAPSHOT_MAX_BYTES } from '../../main/memory/snapshot-protocol';
import { readMemoryTimelines, readSnapshotColumns } from '../../main/readers/memory-reader';
import { below, extremeField, GENERIC, mutate, pick, repeatStructure, type Mutator, type Rng } from './mutate';
import { DisagreementError, fixtures, type FuzzTarget } from './target';
import { acrossReader } from '../helpers/across-reader';

/** Opcodes followed by a length, an integer or a memo index: their operand's width. */
const OPERANDS: Record<number, number> = {
  0x58: 4, // BINUNICODE
  0x8c: 1, // SHORT_BINUNICODE
  0x8d: 8, // BINUNICODE8
  0x42: 4, // BINBYTES
  0x43: 1, // SHORT_BINBYTES
  0x8e: 8, // BINBYTES8
  0x95: 8, // FRAME
  0x8b: 4, // LONG4
  0x8a: 1, // LONG1
  0x54: 4, // BINSTRING
  0x55: 1, // SHORT_BINSTRING
  0x71: 1, // BINPUT
  0x72: 4, // LONG_BINPUT
  0x68: 1, // BINGET
  0x6a: 4, // LONG_BINGET
  0x4a: 4, // BININT
  0x4d: 2, // BININT2
  0x4b: 1, // BININT1
};

/** The operand of the next opcode (from a random place) that has one, set to an extreme value. */
const operand: Mutator = (rng, b) => {
  for (let at = below(rng, b.length), tries = 0; at < b.length && tries < 4096; at++, tries++) {
    const width = OPERANDS[b[at]!];
    if (width !== undefined && at + 1 + width <= b.length) return extremeField(rng, b, at + 1, width);
  }
  return extremeField(rng, b);
};

/** A run of opcodes repeated: from one MEMOIZE (or MARK) to a later one. */
const opcodeRun = (rng: Rng, b: Uint8Array): [number, number] | null => {
  const marks: number[] = [];
  for (let i = 0; i < b.length; i++) if (b[i] === 0x94 || b[i] === 0x28) marks.push(i + 1);
  if (marks.length < 2) return null;
  const from = below(rng, marks.length - 1);
  return [marks[from]!, marks[Math.min(marks.length - 1, from + 1 + below(rng, 8))]!];
};

const MUTATORS: Mutator[] = [...GENERIC, operand, operand, operand, (rng, b) => repeatStructure(rng, b, opcodeRun)];

/** The reader's refusals by the error that made them, where one did. */
const REFUSED_BY: Record<string, string> = { refused: 'UnpickleError', 'not-a-snapshot': 'SnapshotFormatError' };
const refusal = (kind: string) => `refused: ${REFUSED_BY[kind] ?? kind}`;

/**
 * The snapshot reader: unpickled and modelled as columns (`memory`), and as wire timelines (memory.open), then what the
 * host does with each answer: the columns decoded, the summary the CLI prints, each timeline decoded for the view.
 */
export function pickleTarget(): FuzzTarget {
  let seeds: Uint8Array[] = [];
  return {
    file: 'input.pickle',
    load: async () => {
      seeds = fixtures(['snapshots/h100', 'pickles', 'diagnoses', 'programs/h200'], '.pickle');
    },
    mutant: (rng) => mutate(rng, pick(rng, seeds), seeds, MUTATORS),
    read: async (path) => {
      // The redacted bundle's copy (core/memory/redact-pickle.ts): refused in its own words, or a pickle that reads.
      let copy: Uint8Array | null = null;
      try {
        copy = redactPickleStrings(new Uint8Array(readFileSync(path)), (s) => `~${s}`);
      } catch (error) {
        if (!(error instanceof PickleRedactionError)) throw error;
      }
      const columns = await readSnapshotColumns(path, SNAPSHOT_MAX_BYTES);
      const timelines = await readMemoryTimelines({ path, maxBytes: SNAPSHOT_MAX_BYTES }, () => undefined);
      if (columns.ok !== timelines.ok && !(!timelines.ok && timelines.kind === 'no-timeline'))
        throw new DisagreementError(`the columns say ${columns.ok ? 'accepted' : columns.kind}, the timelines ${timelines.ok ? 'accepted' : timelines.kind}`);
      if (!columns.ok) return refusal(columns.kind);
      if (!copy) throw new DisagreementError('the snapshot reader accepted what the redaction refused');
      unpickle(copy);
      const model = decodeSnapshotColumns(JSON.parse(JSON.stringify(columns.header)), columns.body);
      renderMemorySummary(path, summarize(model));
      if (!timelines.ok) return refusal(timelines.kind);
      for (const wire of acrossReader(timelines.result).timelines) decodeTimeline(wire);
      return 'accepted';
    },
  };
}
