import { basename, dirname } from 'node:path';

import { arrangeFindings } from '../../core/sanitizer/arrange-findings';
import type { SanitizerFinding, SanitizerTool } from '../../core/sanitizer/findings';
import { emptySummary, mergeText, parseSanitizerText, splitOutput } from '../../core/sanitizer/parse-text';
import { parseSanitizerTextFindings, toolFromText } from '../../core/sanitizer/parse-text-findings';
import { judgeSanitizeRun, type SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { FileRefusedError, streamRegularFile } from '../services/safe-fs';
import { MAX_XML_BYTES, parseReportFile } from './sanitize-program';

/** The text beside an imported report is read up to this much (its summary is at the end: the end is kept). */
export const MAX_IMPORTED_TEXT_BYTES = 16 * 2 ** 20;

export class SanitizerImportError extends Error {
  override readonly name = 'SanitizerImportError';
}

/** The tool that wrote a report, from its first record's kind; memcheck when it has none. */
export function toolFromRecordKinds(findings: readonly SanitizerFinding[]): SanitizerTool {
  const kinds = new Set(findings.map((f) => f.recordKind));
  if (kinds.has('Hazard') || kinds.has('Analysis')) return 'racecheck';
  if (kinds.has('Initcheck')) return 'initcheck';
  if (kinds.has('Synccheck')) return 'synccheck';
  return 'memcheck';
}

/**
 * A report someone saved (`compute-sanitizer --xml --save report.xml`), and optionally the text the tool
 * printed with it, read as a run of the workbench's own: streamed through the same parser, bounded, arranged
 * (held memory apart, API errors folded under their fault) and judged. Nothing in it is trusted: it is parsed, never executed or followed.
 */
export async function importSanitizerReport(xmlPath: string | null, textPath: string | null, tool: SanitizerTool | null): Promise<SanitizeReport> {
  if (xmlPath === null) {
    if (textPath === null) throw new SanitizerImportError('Give the report compute-sanitizer saved (--xml --save FILE), or the text it printed.');
    return importSanitizerText(textPath, tool);
  }
  const started = performance.now();
  const parsed = await parseReportFile(xmlPath, tool ?? 'memcheck', MAX_XML_BYTES).catch((error: unknown) => {
    throw new SanitizerImportError(refusal(xmlPath, error, 'give the .xml compute-sanitizer saved (--xml --save FILE)'));
  });
  const problems = [...parsed.problems];
  const text = textPath ? await readTail(textPath) : '';
  const textInfo = text ? parseSanitizerText(text) : null;
  const findings = textInfo ? mergeText(parsed.findings, textInfo) : parsed.findings;
  const chosen = tool ?? toolFromRecordKinds(findings);
  const retagged = findings.map((f) => (f.tool === chosen ? f : { ...f, tool: chosen }));
  // Without the text there is no summary: the report alone says what was found, not that nothing was cut.
  return importedReport({
    tool: chosen,
    path: xmlPath,
    started,
    findings: retagged,
    summary: textInfo?.summary ?? { ...emptySummary(), errorsReported: retagged.length },
    text,
    xml: { name: basename(xmlPath), bytes: parsed.size, raw: parsed.raw },
    problems,
    notes: [],
  });
}

/**
 * What compute-sanitizer printed, saved on its own (`compute-sanitizer … > out.txt`, a CI log) without its XML: read
 * as a report in the same way, its findings from the text (as a run's are when the program under the tool crashed
 * before the XML was written), judged the same. The text never names its tool: what it printed says (racecheck's
 * summary, initcheck's records…), else memcheck, the tool's default, is assumed and said.
 */
async function importSanitizerText(textPath: string, tool: SanitizerTool | null): Promise<SanitizeReport> {
  const started = performance.now();
  const text = await readTail(textPath);
  const info = parseSanitizerText(text);
  if (!info.toolSeen)
    throw new SanitizerImportError(
      `${textPath} is not what compute-sanitizer printed: none of its lines is the tool's own (they start with "========="). Give the text the tool printed, or the report it saved with --xml --save FILE.`,
    );
  const seen = tool ?? toolFromText(text);
  const chosen = seen ?? 'memcheck';
  const parsed = parseSanitizerTextFindings(chosen, text);
  const problems = [...parsed.problems];
  if (!info.ended) problems.push('The tool’s output stops before its summary: the tool, or the program under it, ended abruptly (a crash, or a kill).');
  return importedReport({
    tool: chosen,
    path: textPath,
    started,
    findings: mergeText(parsed.findings, info),
    summary: info.summary,
    text,
    // No XML: the summary the tool printed at its end is what says it finished its check.
    xml: null,
    finished: info.ended,
    problems,
    notes: [
      'Read from the text compute-sanitizer printed, without its XML report: files are named as the text names them (their base name), and host stacks hold only the frames the tool printed.',
      ...(seen ? [] : ['The text does not say which tool printed it: memcheck, the tool’s default, is assumed.']),
    ],
  });
}

interface Imported {
  tool: SanitizerTool;
  /** The file the user named: the report's folder and name come from it. */
  path: string;
  started: number;
  findings: SanitizerFinding[];
  summary: SanitizeReport['summary'];
  /** The text the tool printed, when there is one ('' if not). */
  text: string;
  /** The XML report read, or null when only the text was. */
  xml: { name: string; bytes: number; raw: string } | null;
  /** Without XML: whether the text's summary says the tool finished its check. */
  finished?: boolean;
  problems: string[];
  notes: string[];
}

/**
 * A saved report, as a run of the workbench's own reads (main/tools/sanitize-program.ts): arranged — memory an
 * allocator held at exit set apart, the API errors a kernel fault left behind folded under it — and judged the same.
 */
function importedReport(r: Imported): SanitizeReport {
  const { groups, findings: counted, held } = arrangeFindings(r.findings);
  const judged = judgeSanitizeRun({
    tool: r.tool,
    exitCode: null,
    signal: null,
    timedOut: null,
    cancelled: false,
    findings: counted,
    groups,
    held,
    summary: r.summary,
    xmlFiles: r.xml || r.finished ? 1 : 0,
    problems: r.problems,
  });
  const split = r.text ? splitOutput(r.text) : { tool: [], program: [] };
  return {
    tool: r.tool,
    command: [],
    cwd: dirname(r.path),
    sanitizer: { path: '(imported)', version: null },
    ...judged,
    headline: `${basename(r.path)}: ${judged.headline}`,
    details: [...judged.details, ...r.notes],
    exitCode: null,
    signal: null,
    durationMs: performance.now() - r.started,
    findings: counted,
    groups,
    heldAtExit: held,
    summary: r.summary,
    xmlFiles: r.xml ? [{ name: r.xml.name, bytes: r.xml.bytes }] : [],
    findingsFrom: r.xml ? 'xml' : 'text',
    programOutput: split.program.join('\n'),
    toolOutput: split.tool.join('\n'),
    outputDroppedBytes: 0,
    problems: r.problems,
    rawXml: r.xml ? [{ name: r.xml.name, text: r.xml.raw }] : [],
  };
}

/** The last MAX_IMPORTED_TEXT_BYTES of the text the tool printed: its summary is at the end. */
async function readTail(path: string): Promise<string> {
  let text = '';
  await streamRegularFile(path, MAX_IMPORTED_TEXT_BYTES, (t) => (text += t), { fromEnd: true }).catch((error: unknown) => {
    throw new SanitizerImportError(refusal(path, error, 'give the text compute-sanitizer printed, or leave it out'));
  });
  return text;
}

/** Why a file the user named was not read, in words. */
function refusal(path: string, error: unknown, what: string): string {
  const e = error as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return `Cannot open ${path}: there is no such file.`;
  if (e.code === 'EISDIR') return `${path} is a folder: ${what}.`;
  if (error instanceof FileRefusedError) return `${error.message} ${what[0]!.toUpperCase()}${what.slice(1)}.`;
  return `Cannot open ${path}: ${e.message}.`;
}
