import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

import type { SanitizerFinding, SanitizerTool } from '../../core/sanitizer/findings';
import { groupFindings } from '../../core/sanitizer/group';
import { createSanitizerXmlParser } from '../../core/sanitizer/parse-xml';
import { emptySummary, mergeText, parseSanitizerText, splitOutput } from '../../core/sanitizer/parse-text';
import { judgeSanitizeRun, type SanitizeReport } from '../../core/sanitizer/sanitize-report';
import { MAX_XML_BYTES } from './sanitize-program';

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
 * printed with it, read as a run of the workbench's own: streamed through the same parser, bounded, grouped
 * and judged. Nothing in it is trusted: it is parsed, never executed or followed.
 */
export async function importSanitizerReport(xmlPath: string, textPath: string | null, tool: SanitizerTool | null): Promise<SanitizeReport> {
  const started = performance.now();
  const info = await stat(xmlPath).catch((e: NodeJS.ErrnoException) => {
    throw new SanitizerImportError(`Cannot open ${xmlPath}: ${e.code === 'ENOENT' ? 'there is no such file' : e.message}.`);
  });
  if (!info.isFile()) throw new SanitizerImportError(`${xmlPath} is not a file: give the .xml compute-sanitizer saved (--xml --save FILE).`);
  const problems: string[] = [];
  const parser = createSanitizerXmlParser(tool ?? 'memcheck');
  const end = Math.min(info.size, MAX_XML_BYTES);
  for await (const chunk of createReadStream(xmlPath, { encoding: 'utf8', start: 0, end: Math.max(0, end - 1), highWaterMark: 2 ** 20 }))
    parser.write(chunk as string);
  const parsed = parser.close();
  if (end < info.size)
    problems.push(
      `Only the first ${(end / 2 ** 20).toFixed(0)} MiB of ${(info.size / 2 ** 20).toFixed(0)} MiB were read: the findings after that are not shown.`,
    );
  problems.push(...parsed.problems);
  const text = textPath ? await readTail(textPath, MAX_IMPORTED_TEXT_BYTES) : '';
  const textInfo = text ? parseSanitizerText(text) : null;
  const findings = textInfo ? mergeText(parsed.findings, textInfo) : parsed.findings;
  const chosen = tool ?? toolFromRecordKinds(findings);
  const retagged = findings.map((f) => (f.tool === chosen ? f : { ...f, tool: chosen }));
  const groups = groupFindings(retagged);
  // Without the text there is no summary: the report alone says what was found, not that nothing was cut.
  const summary = textInfo?.summary ?? { ...emptySummary(), errorsReported: retagged.length };
  const judged = judgeSanitizeRun({
    tool: chosen,
    exitCode: null,
    signal: null,
    timedOut: null,
    cancelled: false,
    findings: retagged.length,
    groups,
    summary,
    xmlFiles: 1,
    problems,
  });
  const split = text ? splitOutput(text) : { tool: [], program: [] };
  return {
    tool: chosen,
    command: [],
    cwd: dirname(xmlPath),
    sanitizer: { path: '(imported)', version: null },
    ...judged,
    headline: `${basename(xmlPath)}: ${judged.headline}`,
    exitCode: null,
    signal: null,
    durationMs: performance.now() - started,
    findings: retagged.length,
    groups,
    summary,
    xmlFiles: [{ name: basename(xmlPath), bytes: info.size }],
    findingsFrom: 'xml',
    programOutput: split.program.join('\n'),
    toolOutput: split.tool.join('\n'),
    outputDroppedBytes: 0,
    problems,
  };
}

async function readTail(path: string, limit: number): Promise<string> {
  const file = await open(path, 'r').catch((e: NodeJS.ErrnoException) => {
    throw new SanitizerImportError(`Cannot open ${path}: ${e.code === 'ENOENT' ? 'there is no such file' : e.message}.`);
  });
  try {
    const { size } = await file.stat();
    const length = Math.min(size, limit);
    const buffer = Buffer.alloc(length);
    await file.read(buffer, 0, length, size - length);
    return buffer.toString('utf8');
  } finally {
    await file.close();
  }
}
