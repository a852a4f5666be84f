import type { FindingGroup, SanitizerSummary, SanitizerTool } from './findings';
import { heldDetails, holderRule, type HeldMemory } from './held-memory';
import { FOUND_EXIT_CODE } from './sanitizer-args';
import { plural } from '../format';

/** What one run under compute-sanitizer came to, for the CLI, the views and bundles. */
export type SanitizeVerdict = 'found' | 'clean' | 'no-cuda' | 'tool-failed' | 'timed-out' | 'cancelled';

export interface SanitizeReport {
  tool: SanitizerTool;
  /** The program as run (after `--`), and where. */
  command: string[];
  cwd: string;
  /** compute-sanitizer's own path and version. */
  sanitizer: { path: string; version: string | null };
  verdict: SanitizeVerdict;
  /** One sentence: what happened. */
  headline: string;
  /** Sentences that say why, and what to do. */
  details: string[];
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  /** The records that count as findings: those folded under a kernel fault included, memory held at exit not. */
  findings: number;
  /**
   * Where the findings were read from: the XML report, or the tool's text output when the XML held fewer (the
   * program under the tool crashed or was killed, so the report is missing, empty or cut off). Text findings name
   * source files by basename and carry only the host frames the tool printed.
   */
  findingsFrom: 'xml' | 'text';
  /**
   * One group per place: kernel findings first, the API errors a kernel fault left behind folded under it
   * (`followedBy`), a CuPy kernel's line in the user's .py beside CuPy's copy (`sourceMapped`).
   */
  groups: FindingGroup[];
  /**
   * What the leak check reported that an allocator (PyTorch's, CuPy's) or the workbench's runner still held at exit:
   * not the user's leak, not counted in `findings` or the verdict; `details` says why. Absent in reports made before
   * it was told apart (their leaks are all in `groups`).
   */
  heldAtExit?: HeldMemory[];
  summary: SanitizerSummary;
  /** XML files the tool wrote (one per process it followed), with their sizes. */
  xmlFiles: { name: string; bytes: number }[];
  /** The program's own output (the tool's lines taken out), bounded: `outputDroppedBytes` were not kept. */
  programOutput: string;
  toolOutput: string;
  outputDroppedBytes: number;
  /** What could not be read or trusted (a cut-off XML, a refused DOCTYPE, too many findings). */
  problems: string[];
  /**
   * The XML the tool wrote, as it wrote it, for a diagnostic bundle: the first few files, each its start and end
   * when long (core/bundle/bundle-sanitizer.ts bounds it). Absent in reports made before bundles kept it.
   */
  rawXml?: { name: string; text: string }[];
}

export interface SanitizeFacts {
  tool: SanitizerTool;
  exitCode: number | null;
  signal: string | null;
  timedOut: { afterMs: number } | null;
  cancelled: boolean;
  findings: number;
  groups: FindingGroup[];
  /** Memory held at exit (core/sanitizer/held-memory.ts): said, never counted as a finding. */
  held?: readonly HeldMemory[];
  summary: SanitizerSummary;
  xmlFiles: number;
  problems: string[];
}

/**
 * The verdict, and only on evidence: "clean" needs the tool to have watched the program (a report written,
 * its summary printed) and nothing to have been cut off; a run the tool never attached to is not clean. Findings,
 * from the XML or from the text, make a run "found" whatever else went wrong with the tool or its report.
 */
export function judgeSanitizeRun(f: SanitizeFacts): Pick<SanitizeReport, 'verdict' | 'headline' | 'details'> {
  const found = `${plural(f.findings, 'finding')} in ${plural(f.groups.length, 'place')}`;
  const held = f.held ?? [];
  const cut =
    f.summary.notPrinted > 0
      ? [`${plural(f.summary.notPrinted, 'more finding')} were not printed (--print-limit): the counts are lower bounds; --print-limit 0 shows all.`]
      : [];
  if (f.cancelled)
    return {
      verdict: 'cancelled',
      headline: `Cancelled: ${f.tool} was stopped${f.findings ? ` after ${found}` : ''}.`,
      details: ['Run it again when you are ready.'],
    };
  if (f.timedOut)
    return {
      verdict: 'timed-out',
      headline: `${f.tool} ran past ${Math.round(f.timedOut.afterMs / 1000)} s and was stopped${f.findings ? `; ${found} so far` : ''}.`,
      details: [
        'Instrumented programs run 10 to 100 times slower. Give it longer (--timeout), run a smaller input, or look for a kernel that never ends.',
        ...cut,
      ],
    };
  if (f.summary.toolErrors.some((e) => /before first instrumented API call/i.test(e)))
    return {
      verdict: 'no-cuda',
      headline: `${f.tool} saw no CUDA call: nothing was checked.`,
      details: [
        `The program ended before its first CUDA call the tool could follow (it said: ${f.summary.toolErrors.join(' ')}).`,
        'Check that the program runs without the sanitizer, that it uses the GPU at all, and that its CUDA work is not in a process the tool did not follow.',
      ],
    };
  const foundVerdict = (): Pick<SanitizeReport, 'verdict' | 'headline' | 'details'> => {
    const leaks = f.groups.filter((g) => g.kind === 'leak').reduce((n, g) => n + g.leakedBytes, 0);
    return {
      verdict: 'found',
      headline: `${f.tool} found ${found}${leaks ? `, ${plural(leaks, 'byte')} leaked` : ''}.`,
      details: [...cut, ...f.problems, ...(f.summary.toolErrors.length ? [`The tool also said: ${f.summary.toolErrors.join(' ')}`] : []), ...heldDetails(held)],
    };
  };
  // Findings are evidence wherever they were read from (the XML, or the text when the XML is missing or cut off):
  // a tool that reported them and then failed, or wrote no report, still found them.
  if (f.findings > 0) return foundVerdict();
  if (f.summary.toolErrors.length || f.xmlFiles === 0)
    return {
      verdict: 'tool-failed',
      headline: `${f.tool} did not finish its check${f.exitCode !== null ? ` (exit ${f.exitCode})` : f.signal ? ` (${f.signal})` : ''}.`,
      details: [
        f.summary.toolErrors.length ? `It said: ${f.summary.toolErrors.join(' ')}` : 'It wrote no report and said nothing about why.',
        'Run the same command in a terminal to see everything it printed; check the command line and that the program starts.',
        ...f.problems,
      ],
    };
  // The tool counts the blocks held at exit as errors, and exits with its "found" code for them alone — but only when
  // every error it counted was printed and is one of those blocks: an unprinted error may be anything.
  const heldBlocks = held.reduce((n, h) => n + h.blocks, 0);
  const allHeld = f.summary.notPrinted === 0 && (f.summary.errorsReported === null || f.summary.errorsReported <= heldBlocks);
  if (held.length > 0 && !allHeld)
    return {
      verdict: 'tool-failed',
      headline: `${f.tool} counted ${plural(f.summary.errorsReported ?? heldBlocks + f.summary.notPrinted, 'error')}, of which ${plural(heldBlocks, 'block')} held at exit by an allocator; the rest were not printed, so they cannot be told apart: no verdict.`,
      details: [...cut, ...heldDetails(held), 'Run it again with --print-limit 0 to see every error.', ...f.problems],
    };
  const foundHeld = held.length > 0 && f.exitCode === FOUND_EXIT_CODE;
  if (f.exitCode === FOUND_EXIT_CODE && !foundHeld)
    return {
      verdict: 'tool-failed',
      headline: `${f.tool} exited with ${FOUND_EXIT_CODE}, its code for "found something", but no finding could be read: no verdict.`,
      details: [
        ...f.problems,
        `Either the program itself exited with ${FOUND_EXIT_CODE}, or the tool's report was lost: run the same command in a terminal to see what it printed.`,
      ],
    };
  if (f.problems.length || f.summary.errorsReported === null)
    return {
      verdict: 'tool-failed',
      headline: `${f.tool} reported nothing, but its report could not be read whole: no verdict.`,
      details: [...f.problems, ...(f.summary.errorsReported === null ? ['Its summary line (ERROR SUMMARY) is missing: the tool may have died.'] : [])],
    };
  const exited = f.exitCode && !foundHeld ? `, but the program itself exited with ${f.exitCode}` : '';
  if (held.length)
    return {
      verdict: 'clean',
      headline: `✓ ${f.tool} found nothing of yours${exited}: the ${plural(
        held.reduce((n, h) => n + h.bytes, 0),
        'byte',
      )} it reported as leaked were held at exit by ${held.map((h) => holderRule(h.holder).label).join(' and ')}.`,
      details: [...heldDetails(held), cleanScope(f.tool)],
    };
  return {
    verdict: 'clean',
    headline: `✓ ${f.tool} found nothing${exited}.`,
    details: [cleanScope(f.tool)],
  };
}

/** What a clean answer covers, so silence is not read as more than it is. */
function cleanScope(tool: SanitizerTool): string {
  switch (tool) {
    case 'memcheck':
      return 'memcheck checks the accesses this run made, not every input; an allocator that pools memory (PyTorch, CuPy) hides overruns that stay inside its pool.';
    case 'racecheck':
      return 'racecheck checks shared-memory hazards in this run only; global-memory races are not its to find.';
    case 'initcheck':
      return 'initcheck checks reads of global memory in this run only.';
    case 'synccheck':
      return 'synccheck checks barriers and warp syncs in this run only.';
  }
}
