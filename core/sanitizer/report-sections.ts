import { formatBytes, plural } from '../format';
import type { FindingGroup, SanitizerSummary } from './findings';
import { describeFollowers, describeGroup } from './group';
import { describeHeld, heldDetails, holderRule, type HeldMemory } from './held-memory';
import type { SanitizeReport } from './sanitize-report';

/**
 * The parts of a report the findings view shows apart from the rows, as sentences: the API errors folded under a
 * kernel fault (core/sanitizer/arrange-findings.ts), and the memory an allocator or the workbench held at exit
 * (core/sanitizer/held-memory.ts). The view only shows them.
 */

/** The API errors folded under a fault: the line under its row, and each error's own sentence when opened. */
export interface FoldedErrors {
  /** "… and 2 API errors that followed it, because the context was dead: cudaLaunchKernel (cudaErrorAssert), …" */
  line: string;
  /** One sentence per folded group, as a row of its own would say it. */
  errors: { key: string; sentence: string }[];
}

export function foldedErrors(g: FindingGroup, summary?: SanitizerSummary): FoldedErrors | null {
  const followers = g.followedBy ?? [];
  if (!followers.length) return null;
  return { line: describeFollowers(g), errors: followers.map((f) => ({ key: f.key, sentence: describeGroup(f, summary) })) };
}

/** The memory held at exit, as its own short section under the verdict. */
export interface HeldSection {
  /** "Not counted: 8,000 bytes (7.81 KiB) held at exit by CuPy arrays still alive" */
  title: string;
  /** Per holder: what it held and where it was asked for, and why that is not the user's leak. */
  holders: { holder: HeldMemory['holder']; held: string; why: string }[];
}

const sizeOf = (bytes: number) => `${plural(bytes, 'byte')}${bytes >= 1024 ? ` (${formatBytes(bytes)})` : ''}`;

export function heldSection(report: Pick<SanitizeReport, 'heldAtExit'>): HeldSection | null {
  const held = report.heldAtExit ?? [];
  if (!held.length) return null;
  const bytes = held.reduce((n, h) => n + h.bytes, 0);
  const by = held.map((h) => holderRule(h.holder).label).join(' and ');
  return {
    title: `Not counted: ${sizeOf(bytes)} held at exit by ${by}`,
    holders: held.map((h) => ({ holder: h.holder, held: describeHeld(h), why: holderRule(h.holder).why })),
  };
}

/**
 * The report's details less the sentences about held memory (judgeSanitizeRun puts them there, for the text and
 * JSON reports): the view says those in their own section, once.
 */
export function detailsBesideHeld(report: Pick<SanitizeReport, 'details' | 'heldAtExit'>): string[] {
  const said = new Set(heldDetails(report.heldAtExit ?? []));
  return report.details.filter((d) => !said.has(d));
}
