import type { Dim3, SanitizerFinding, SanitizerSummary } from './findings';
import { plural, thousands } from '../format';

/**
 * What only compute-sanitizer's text output says: its summary lines, its own failures (it did not start, the
 * target does not exist, an option is wrong), and for memcheck the nearest allocation of each bad access
 * (`and is 1 bytes after the nearest allocation at 0x… of size 4,000 bytes`), which the XML leaves out.
 *
 * The tool's lines start with `========= `; everything else is the program's own output, interleaved.
 */

const PREFIX = '=========';
const BANNER = 'COMPUTE-SANITIZER';

/** The tool's lines (without the `========= ` prefix) and the program's own, each in order. */
export function splitOutput(text: string): { tool: string[]; program: string[] } {
  const tool: string[] = [];
  const program: string[] = [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  for (const line of lines) {
    if (line.startsWith(PREFIX) && (line.length === PREFIX.length || line[PREFIX.length] === ' ')) tool.push(line.slice(PREFIX.length + 1));
    else program.push(line);
  }
  return { tool, program };
}

/** The nearest allocation of one memcheck finding, as the text printed it, with what identifies the finding. */
export interface NearestNote {
  /** `Access to 0x… is out of bounds` (the finding's access.address). */
  address: string;
  thread: Dim3 | null;
  block: Dim3 | null;
  nearest: NonNullable<SanitizerFinding['nearest']>;
}

export interface SanitizerTextInfo {
  summary: SanitizerSummary;
  /** One per memcheck finding that printed a nearest allocation, in the order printed. */
  nearest: NearestNote[];
  /** The tool's own output seen at all (its banner, or a line of its own): false when something else printed this. */
  toolSeen: boolean;
  /**
   * The tool got to its summary (`ERROR SUMMARY`, `RACECHECK SUMMARY`) or said why it could not run. False when its
   * output stops after its banner: the tool, or the program with it, died.
   */
  ended: boolean;
}

export const emptySummary = (): SanitizerSummary => ({
  errorsReported: null,
  warningsReported: null,
  hazardsDisplayed: null,
  notPrinted: 0,
  leakedBytes: null,
  leakedAllocations: null,
  toolErrors: [],
  targetReturnedError: false,
});

/** `4,000` and `140,342,259,089,408` (thousands separators) as numbers. */
const count = (s: string): number => Number(s.replace(/,/g, ''));
const add = (a: number | null, b: number) => (a ?? 0) + b;
const dim = (s: string | undefined): Dim3 | null => {
  const m = s === undefined ? null : /^(\d+),(\d+),(\d+)$/.exec(s);
  return m ? { x: Number(m[1]), y: Number(m[2]), z: Number(m[3]) } : null;
};

const N = String.raw`(\d[\d,]*)`;
const ERROR_SUMMARY = new RegExp(String.raw`^ERROR SUMMARY: ${N} errors?\s*$`);
const NOT_PRINTED = new RegExp(String.raw`^ERROR SUMMARY: ${N} errors? (?:was|were) not printed`);
const LEAK_SUMMARY = new RegExp(String.raw`^LEAK SUMMARY: ${N} bytes? leaked in ${N} allocations?`);
const RACECHECK_SUMMARY = new RegExp(String.raw`^RACECHECK SUMMARY: ${N} hazards? displayed \(${N} errors?, ${N} warnings?\)`);
const ACCESS = /^\s+(?:Access to|Address) (0x[0-9a-fA-F]+)\b/;
const BY_THREAD = /^\s+by thread \((\d+,\d+,\d+)\) in block \((\d+,\d+,\d+)\)/;
const NEAREST = new RegExp(String.raw`^\s+and is (?:${N} bytes? (before|after)|inside) the nearest allocation at (0x[0-9a-fA-F]+) of size ${N} bytes?`);
/** A finding's first line starts with one of these even when it says `Error:` (racecheck does). */
const FINDING_LINE = /^(?:Error|Warning): (?:Race reported|Potential \w+ hazard|.*\bhazard detected)/;
/** The tool failing, in its own lines. */
const TOOL_FAILURE = [
  /^Error: (?!Race reported|Potential \w+ hazard)/,
  /^Target application (?:doesn't exist|does not exist|is not a valid|terminated before|could not be)/,
  /^Internal (?:Compute )?Sanitizer Error/i,
  /^(?:Compute )?Sanitizer (?:is )?(?:not supported|failed|error)/i,
];
/** Failures compute-sanitizer prints before it starts anything, without its prefix (its option parser's). */
const OPTION_FAILURE = [/^the argument (?:\('[^']*'\) )?for option '[^']*' is invalid/, /^unrecogni[sz]ed option/i, /^the option '[^']*' is required/];

/** Reads the tool's text output (the whole of what it printed: its `========= ` lines are picked out). */
export function parseSanitizerText(text: string): SanitizerTextInfo {
  const summary = emptySummary();
  const nearest: NearestNote[] = [];
  const lines = text.split(/\r?\n/);
  let bannerSeen = false;
  let toolSeen = false;
  let address: string | null = null;
  let thread: Dim3 | null = null;
  let block: Dim3 | null = null;

  for (const raw of lines) {
    const isTool = raw.startsWith(PREFIX) && (raw.length === PREFIX.length || raw[PREFIX.length] === ' ');
    if (!isTool) {
      // Before its banner, compute-sanitizer's option parser prints without the prefix, then the usage.
      if (!bannerSeen && OPTION_FAILURE.some((re) => re.test(raw.trim()))) {
        summary.toolErrors.push(raw.trim());
        toolSeen = true;
      }
      continue;
    }
    toolSeen = true;
    const line = raw.slice(PREFIX.length + 1);
    if (line.trim() === BANNER) {
      bannerSeen = true;
      continue;
    }
    if (!/^\s/.test(line)) {
      // A finding's first line, a summary line, or the tool about itself: what came before is done with.
      address = null;
      thread = null;
      block = null;
      let m: RegExpExecArray | null;
      if ((m = NOT_PRINTED.exec(line))) summary.notPrinted += count(m[1]!);
      else if ((m = ERROR_SUMMARY.exec(line))) summary.errorsReported = add(summary.errorsReported, count(m[1]!));
      else if ((m = LEAK_SUMMARY.exec(line))) {
        summary.leakedBytes = add(summary.leakedBytes, count(m[1]!));
        summary.leakedAllocations = add(summary.leakedAllocations, count(m[2]!));
      } else if ((m = RACECHECK_SUMMARY.exec(line))) {
        summary.hazardsDisplayed = add(summary.hazardsDisplayed, count(m[1]!));
        summary.errorsReported = add(summary.errorsReported, count(m[2]!));
        summary.warningsReported = add(summary.warningsReported, count(m[3]!));
      } else if (/^Target application returned an error/.test(line)) summary.targetReturnedError = true;
      else if (!FINDING_LINE.test(line) && TOOL_FAILURE.some((re) => re.test(line))) summary.toolErrors.push(line.trim());
      continue;
    }
    let m: RegExpExecArray | null;
    if ((m = BY_THREAD.exec(line))) {
      thread = dim(m[1]);
      block = dim(m[2]);
    } else if ((m = ACCESS.exec(line))) address = m[1]!;
    else if ((m = NEAREST.exec(line)) && address !== null) {
      nearest.push({
        address,
        thread,
        block,
        nearest: {
          allocation: m[3]!,
          allocationSize: count(m[4]!),
          distance: m[1] === undefined ? 0 : count(m[1]),
          side: m[2] === 'before' ? 'before' : m[2] === 'after' ? 'after' : 'inside',
        },
      });
    }
  }
  const ended = summary.errorsReported !== null || summary.toolErrors.length > 0 || !toolSeen;
  return { summary, nearest, toolSeen, ended };
}

const sameDim = (a: Dim3 | null, b: Dim3 | null) => a === null || b === null || (a.x === b.x && a.y === b.y && a.z === b.z);

/**
 * The text's nearest allocations put into the XML's findings: each memory access takes the next note printed
 * for the same address (and the same thread and block, where both say). The XML and the text must come from
 * the same run (`--xml --save FILE` prints the text as well); notes from another run match no address and are
 * left out. Returns new findings; those it does not touch are the same objects.
 */
export function mergeText(findings: readonly SanitizerFinding[], info: SanitizerTextInfo): SanitizerFinding[] {
  const byAddress = new Map<string, NearestNote[]>();
  for (const note of info.nearest) {
    const key = note.address.toLowerCase();
    const queue = byAddress.get(key);
    if (queue) queue.push(note);
    else byAddress.set(key, [note]);
  }
  const used = new Map<string, number>();
  return findings.map((f) => {
    const address = f.access?.address?.toLowerCase();
    if (f.kind !== 'memory-access' || address === undefined || f.nearest !== null) return f;
    const queue = byAddress.get(address);
    if (queue === undefined) return f;
    let i = used.get(address) ?? 0;
    while (i < queue.length && !(sameDim(queue[i]!.thread, f.thread) && sameDim(queue[i]!.block, f.block))) i++;
    if (i >= queue.length) return f;
    used.set(address, i + 1);
    return { ...f, nearest: queue[i]!.nearest };
  });
}

/** Whether the tool left findings out (--print-limit), so that counts in groups are at least what they say. */
export function countsAreLowerBounds(s: SanitizerSummary): boolean {
  if (s.notPrinted > 0) return true;
  return s.hazardsDisplayed !== null && s.errorsReported !== null && s.errorsReported + (s.warningsReported ?? 0) > s.hazardsDisplayed;
}

/**
 * Sentences about the run as a whole: the tool failing, findings --print-limit cut, racecheck reports left out;
 * and, with `ended: false` (SanitizerTextInfo.ended), the tool's output stopping before its summary.
 */
export function describeSummary(s: SanitizerSummary, ended = true): string[] {
  const out: string[] = [];
  if (!ended) {
    out.push(
      'compute-sanitizer stopped before its summary: it, or the program it ran, died (a crash, a kill, a time limit) while findings were still coming. ' +
        "The findings it printed are shown; there may have been more. Check the exit status and the program's own output, and run it again.",
    );
  }
  for (const line of s.toolErrors) {
    let what = 'compute-sanitizer stopped with an error of its own';
    if (/doesn't exist|does not exist|not a valid executable/.test(line))
      what = 'Check the program path, and that the file is an executable (or a script with a #! line)';
    else if (/terminated before first instrumented API call/.test(line))
      what =
        'The program ended before its first CUDA call, so nothing was checked. Check that it runs on its own and reaches its CUDA work; if a child process does the CUDA work, add --target-processes all';
    else if (/option/.test(line)) what = 'Check the options (compute-sanitizer --help lists them; the tools are memcheck, racecheck, initcheck and synccheck)';
    out.push(`compute-sanitizer failed: ${line.replace(/^Error:\s*/, '').replace(/\.$/, '')}. ${what}.`);
  }
  if (s.notPrinted > 0) {
    out.push(
      `${plural(s.notPrinted, 'more error')} ${s.notPrinted === 1 ? 'was' : 'were'} not printed (--print-limit): the counts shown are lower bounds. ` +
        `Run with --print-limit 0 to see them all (the XML then holds every record, and can run to hundreds of MB).`,
    );
  }
  if (s.hazardsDisplayed !== null && s.errorsReported !== null) {
    const reported = s.errorsReported + (s.warningsReported ?? 0);
    if (reported > s.hazardsDisplayed) {
      out.push(
        `racecheck counted ${plural(reported, 'report')} but displayed ${thousands(s.hazardsDisplayed)}: the rest were cut by --print-limit. Run with --print-limit 0 to see them all.`,
      );
    }
  }
  return out;
}
