import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';

import { makePrivateFolder } from '../services/private-folder';
import { plural } from '../../core/format';
import type { SanitizerFinding, SanitizerTool } from '../../core/sanitizer/findings';
import { arrangeFindings } from '../../core/sanitizer/arrange-findings';
import { headTail, RAW_XML_KEPT_CHARS, RAW_XML_KEPT_FILES } from '../../core/bundle/raw-xml-text';
import { createSanitizerXmlParser } from '../../core/sanitizer/parse-xml';
import { mergeText, parseSanitizerText, splitOutput } from '../../core/sanitizer/parse-text';
import { parseSanitizerTextFindings } from '../../core/sanitizer/parse-text-findings';
import { judgeSanitizeRun, type SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { DEFAULT_SANITIZER_OPTIONS, sanitizeProgramArguments, type SanitizerOptions } from '../../core/sanitizer/sanitizer-args';
import type { AbortLike } from '../../core/api/channels';
import { computeSanitizerVersion, locateComputeSanitizer } from './compute-sanitizer';
import { READER_LIMITS, runReader, startWaitingReader, type WaitingReader } from '../readers/reader-process';
import { runToolProgram } from './tool-program';
import { BoundedOutput } from './bounded-output';
import { findingCounter } from './finding-counter';
import { streamRegularFile } from '../services/safe-fs';
import { cupyKernelCache, placeCupyKernels } from './cupy-kernel-sources';

export interface SanitizeProgramRequest {
  tool: SanitizerTool;
  /** The program and its arguments, as given after `--`: never through a shell. */
  command: string[];
  cwd: string;
  /** Added to (or replacing in) the host's environment for the program. */
  env?: Record<string, string>;
  options?: Partial<Omit<SanitizerOptions, 'tool'>>;
  /** The outer watchdog: the whole run, the tool included (default 10 minutes). */
  timeoutMs?: number;
  signal?: AbortLike;
  /** Progress: the findings the tool has printed so far, as they come. */
  onFindings?: (count: number) => void;
  /** What the program and the tool print, as it comes (the tool's lines begin with "========="). */
  onOutput?: (text: string, stream: 'stdout' | 'stderr') => void;
  /** What is about to run, as it runs: the tool and its arguments, and what the workbench set in its environment. */
  onStart?: (ran: { argv: string[]; envChanges: Record<string, string> }) => void;
}

/** When the tool was asked to stop: SIGTERM to its group, then SIGKILL this long after. */
const SANITIZER_STOP_GRACE_MS = 2_000;
/** All of a run's XML together is read up to this size; past it, what was read is kept and the rest is said. */
export const MAX_XML_BYTES = 512 * 2 ** 20;

export class SanitizerUnavailableError extends Error {
  override readonly name = 'SanitizerUnavailableError';
}

/** compute-sanitizer's path and version, or a message that says where it was looked for and how to get it. */
export function requireSanitizer(): { path: string; version: Promise<string | null> } {
  const { path, searched } = locateComputeSanitizer();
  if (!path)
    throw new SanitizerUnavailableError(
      `compute-sanitizer was not found (looked in ${searched.slice(0, 6).join(', ')}${searched.length > 6 ? ', …' : ''}). It comes with the CUDA toolkit: install the toolkit, or set GPU_WORKBENCH_COMPUTE_SANITIZER to its path.`,
    );
  // Its --version takes a while: asked beside the run, not before it (the run's overhead is measured against the bare tool).
  return { path, version: computeSanitizerVersion(path) };
}

/**
 * Runs a program under compute-sanitizer, as one action: XML saved per process, the text kept (bounded) for
 * what the XML leaves out, an outer watchdog, Cancel through `signal`. The tool leads a process group of its
 * own with a reaper in it tied to the host, so the program dies with the host, and a stop reaches all of it.
 */
export async function sanitizeProgram(request: SanitizeProgramRequest): Promise<SanitizeReport> {
  if (!request.command.length) throw new Error('No program to run: give it after `--`.');
  const sanitizer = requireSanitizer();
  const options: SanitizerOptions = { ...DEFAULT_SANITIZER_OPTIONS, ...request.options, tool: request.tool };
  const dir = await makePrivateFolder('sanitize');
  const started = performance.now();
  let reader: WaitingReader | undefined;
  try {
    reader = startReportsReader(dir, request.tool);
    const args = sanitizeProgramArguments(options, join(dir, 'report-%p.xml'), request.command);
    const programEnv = { ...process.env, ...request.env };
    // A CuPy program's kernels are compiled into a cache of the run's own, their sources saved, to find their lines in its .py.
    const cupyCache = await cupyKernelCache(programEnv, request.cwd, dir);
    const count = request.onFindings ? findingCounter(request.tool, request.onFindings) : null;
    request.onStart?.({ argv: [sanitizer.path, ...args], envChanges: { ...cupyCache.env } });
    const exit = await runToolProgram(sanitizer.path, args, {
      name: 'gpu-workbench-sanitize',
      cwd: request.cwd,
      env: { ...programEnv, ...cupyCache.env },
      timeoutMs: request.timeoutMs ?? 600_000,
      stopGraceMs: SANITIZER_STOP_GRACE_MS,
      signal: request.signal,
      onOutput: request.onOutput,
      onChunk: count ?? undefined,
    }).catch((error: Error) => {
      throw new Error(error.message.replace('gpu-workbench-sanitize could not be started', 'compute-sanitizer could not be started'));
    });
    const { output, timedOut, cancelled } = exit;

    const report = await collectReport({
      tool: request.tool,
      command: request.command,
      cwd: request.cwd,
      sanitizer,
      exitCode: exit.code,
      signal: exit.signal,
      timedOut,
      cancelled,
      started,
      output,
      dir,
      reader,
      // The reports are read within what is left of the run's time, and stop with it on Cancel.
      read: { signal: request.signal, timeoutMs: Math.max(1_000, (request.timeoutMs ?? 600_000) - (performance.now() - started)) },
    });
    const placed = await placeCupyKernels(report.groups, { cache: cupyCache, command: request.command, cwd: request.cwd });
    return { ...report, groups: placed.groups, problems: [...report.problems, ...placed.problems] };
  } finally {
    reader?.dispose();
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
}

export interface CollectedRun {
  tool: SanitizerTool;
  command: string[];
  cwd: string;
  sanitizer: { path: string; version: Promise<string | null> | string | null };
  exitCode: number | null;
  signal: string | null;
  timedOut: { afterMs: number } | null;
  cancelled: boolean;
  started: number;
  output: BoundedOutput;
  /** The folder the tool saved its XML in (report-<pid>.xml). */
  dir: string;
  /** The program under the tool was the workbench's runner (a plan re-run): what it left allocated is its own (arrangeFindings). */
  runner?: boolean;
  /** A reader started for `dir` beside the tool (startReportsReader), so its start-up is not paid after the tool. */
  reader?: WaitingReader;
  /** What stops the reports' read: a Cancel, and a time limit shorter than the reader's own. */
  read?: { signal?: AbortLike; timeoutMs?: number };
}

/** The reader of a run's XML, started while the tool runs; the caller disposes of it should the run never be read. */
export const startReportsReader = (dir: string, tool: SanitizerTool): WaitingReader =>
  startWaitingReader({ kind: 'sanitizer-reports', dir, tool }, reportsWhat(dir));
const reportsWhat = (dir: string) => `compute-sanitizer's reports in ${dir}`;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The XML reports, read in a reader process: what the program under the tool did decides what they hold (a kernel's
 * name, a record of any size), so they are files from outside too. A reader that fails is a problem in words, and
 * the run's findings then come from the tool's text.
 */
async function readReportsInReader(dir: string, tool: SanitizerTool, waiting?: WaitingReader, read: CollectedRun['read'] = {}): Promise<ReportsRead> {
  const own = READER_LIMITS['sanitizer-reports'].timeoutMs;
  const options = { signal: read.signal, limits: { timeoutMs: Math.min(own, read.timeoutMs ?? own) } };
  try {
    const { value } = await (waiting
      ? waiting.read<ReportsRead>(options)
      : runReader<ReportsRead>({ kind: 'sanitizer-reports', dir, tool }, reportsWhat(dir), options));
    const lists = [value.findings, value.xmlFiles, value.problems, value.rawXml];
    if (!lists.every((l) => Array.isArray(l) && l.every((x) => isRecord(x) || typeof x === 'string'))) throw new Error('its answer is not a list of reports');
    return value;
  } catch (error) {
    return {
      findings: [],
      xmlFiles: [],
      problems: [`The tool's XML reports were not read: ${error instanceof Error ? error.message : String(error)}`],
      rawXml: [],
    };
  }
}

/**
 * The tool's XML and text after a run, read, merged, grouped and judged. The XML is the source of findings while
 * it holds at least as many as the text: when the program under the tool crashed or was killed, the tool wrote no
 * XML, or an empty or cut-off one, but it printed every finding as it went, so the text's findings are used.
 */
export async function collectReport(run: CollectedRun): Promise<SanitizeReport> {
  const text = run.output.text();
  const { tool: toolLines, program: programLines } = splitOutput(text);
  const textInfo = parseSanitizerText(text);
  const fromXml = await readReportsInReader(run.dir, run.tool, run.reader, run.read);
  const { xmlFiles } = fromXml;
  const fromText = parseSanitizerTextFindings(run.tool, text);
  const findingsFrom = fromText.findings.length > fromXml.findings.length ? 'text' : 'xml';
  const findings = findingsFrom === 'text' ? fromText.findings : fromXml.findings;
  const problems: string[] = [];
  if (findingsFrom === 'text') {
    problems.push(fromTextProblem(xmlFiles.length, fromXml.findings.length, fromText.findings.length, run.output.droppedBytes), ...fromText.problems);
  }
  problems.push(...fromXml.problems);
  const merged = mergeText(findings, textInfo);
  // Memory an allocator held at exit set apart, the API errors a kernel fault left behind folded under it.
  const { groups, findings: counted, held } = arrangeFindings(merged, { runner: run.runner ?? false });
  const summary = textInfo.summary;
  if (!textInfo.ended && !run.timedOut && !run.cancelled && textInfo.toolSeen)
    problems.push('The tool’s output stops before its summary: the tool, or the program under it, ended abruptly (a crash, or a kill).');
  const judged = judgeSanitizeRun({
    tool: run.tool,
    exitCode: run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    cancelled: run.cancelled,
    findings: counted,
    groups,
    held,
    summary,
    xmlFiles: xmlFiles.length,
    problems,
  });
  return {
    tool: run.tool,
    command: run.command,
    cwd: run.cwd,
    sanitizer: { path: run.sanitizer.path, version: await run.sanitizer.version },
    ...judged,
    exitCode: run.exitCode,
    signal: run.signal,
    durationMs: performance.now() - run.started,
    findings: counted,
    findingsFrom,
    groups,
    heldAtExit: held,
    summary,
    xmlFiles,
    programOutput: programLines.join('\n'),
    toolOutput: toolLines.join('\n'),
    outputDroppedBytes: run.output.droppedBytes,
    problems,
    rawXml: fromXml.rawXml,
  };
}

/** Why the findings shown come from the tool's text output rather than its XML report. */
function fromTextProblem(xmlFiles: number, inXml: number, inText: number, droppedBytes: number): string {
  const report =
    xmlFiles === 0
      ? 'compute-sanitizer’s XML report is missing'
      : `compute-sanitizer’s XML report is incomplete (${plural(inXml, 'finding')}${inXml === 0 ? ': empty or cut off' : ''})`;
  const gap =
    droppedBytes > 0
      ? ` The output was too long to keep whole (${plural(droppedBytes, 'byte')} from its middle left out), so findings printed there are missing.`
      : '';
  return (
    `${report}: the program under it probably crashed or was killed before the tool could write it, so the ${plural(inText, 'finding')} shown come from ` +
    `the tool’s text output, which it prints as it goes. The text names source files without their folders and prints only part of each host stack.${gap} ` +
    `Check the program's exit status and its own output for why it ended.`
  );
}

/**
 * One XML report streamed through the parser, its first `maxBytes` at most: the findings, what could not be
 * read, the file's size. Only a regular file is read (a FIFO or a device is refused at once).
 */
export async function parseReportFile(
  path: string,
  tool: SanitizerTool,
  maxBytes: number,
): Promise<{ findings: SanitizerFinding[]; problems: string[]; size: number; raw: string }> {
  const parser = createSanitizerXmlParser(tool);
  const raw = headTail(RAW_XML_KEPT_CHARS);
  const { size, read } = await streamRegularFile(path, maxBytes, (text) => {
    raw.push(text);
    parser.write(text);
  });
  const parsed = parser.close();
  const cut =
    read < size
      ? [`Only the first ${(read / 2 ** 20).toFixed(0)} MiB of ${(size / 2 ** 20).toFixed(0)} MiB were read: the findings after that are not shown.`]
      : [];
  return { findings: parsed.findings, problems: [...cut, ...parsed.problems], size, raw: raw.text() };
}

export interface ReportsRead {
  findings: SanitizerFinding[];
  xmlFiles: { name: string; bytes: number }[];
  problems: string[];
  rawXml: { name: string; text: string }[];
}

/** Every XML the tool wrote (one per process), streamed through the parser, together bounded by MAX_XML_BYTES. */
export async function readReports(dir: string, tool: SanitizerTool): Promise<ReportsRead> {
  const rawXml: { name: string; text: string }[] = [];
  const names = (await readdir(dir)).filter((n) => /^report-\d+\.xml$/.test(n)).sort();
  const findings: SanitizerFinding[] = [];
  const problems: string[] = [];
  const xmlFiles: { name: string; bytes: number }[] = [];
  let budget = MAX_XML_BYTES;
  for (const name of names) {
    if (budget <= 0) {
      problems.push(`${name} was not read: the reports together passed ${MAX_XML_BYTES / 2 ** 20} MiB. Lower --print-limit to keep reports small.`);
      continue;
    }
    const parsed = await parseReportFile(join(dir, name), tool, budget).catch((error: unknown) => {
      problems.push(`${name} could not be read: ${error instanceof Error ? error.message : String(error)}.`);
      return null;
    });
    if (!parsed) continue;
    xmlFiles.push({ name, bytes: parsed.size });
    if (rawXml.length < RAW_XML_KEPT_FILES) rawXml.push({ name, text: parsed.raw });
    budget -= Math.min(parsed.size, budget);
    findings.push(...parsed.findings);
    problems.push(...parsed.problems.map((p) => (names.length > 1 ? `${name}: ${p}` : p)));
  }
  return { findings, xmlFiles, problems, rawXml };
}
