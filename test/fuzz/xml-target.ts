import { sanitizeReportSchema } from '../../core/bundle/bundle-sanitizer';
import { SANITIZER_TOOLS, type SanitizerTool } from '../../core/sanitizer/findings';
import { createSanitizerXmlParser } from '../../core/sanitizer/parse-xml';
import { importSanitizerReport, SanitizerImportError } from '../../main/tools/sanitize-import';
import { below, pick, repeatStructure, TEXT, mutate, type Mutator, type Rng } from './mutate';
import { DisagreementError, fixtures, type FuzzTarget } from './target';

const latin1 = new TextDecoder('latin1');

/** An element from its start tag to its end tag (a record most often), for repeating. */
const elementSpan = (rng: Rng, b: Uint8Array): [number, number] | null => {
  const text = latin1.decode(b);
  const starts = [...text.matchAll(rng() < 0.5 ? /<record>/g : /<([A-Za-z]+)>/g)];
  if (!starts.length) return null;
  const start = pick(rng, starts);
  const name = start[1] ?? 'record';
  const end = text.indexOf(`</${name}>`, start.index);
  return end < 0 ? null : [start.index, end + name.length + 3];
};

const MUTATORS: Mutator[] = [...TEXT, (rng, b) => repeatStructure(rng, b, elementSpan), (rng, b) => repeatStructure(rng, b, elementSpan)];

/** The same text through the streaming parser in chunks of random sizes: what it finds must not depend on them. */
function chunked(rng: Rng, text: string, tool: SanitizerTool): { findings: number; complete: boolean } {
  const parser = createSanitizerXmlParser(tool);
  for (let at = 0; at < text.length;) {
    const n = 1 + below(rng, rng() < 0.1 ? 64 : 65_536);
    parser.write(text.slice(at, at + n));
    at += n;
  }
  const r = parser.close();
  return { findings: r.findings.length, complete: r.complete };
}

/**
 * The sanitizer report importer (sanitize.open, bundle export --sanitizer-xml): the XML streamed from its file,
 * parsed, arranged and judged, the report held to the schema the host checks the reader's answer with; and the same
 * text parsed in random chunks, which must find as much.
 */
export function xmlTarget(): FuzzTarget {
  let seeds: Uint8Array[] = [];
  return {
    file: 'input.xml',
    load: async () => {
      seeds = fixtures(['sanitizer/h100', 'programs/h200'], '.xml');
    },
    mutant: (rng) => mutate(rng, pick(rng, seeds), seeds, MUTATORS),
    read: async (path, bytes, rng) => {
      const tool = rng() < 0.5 ? null : pick(rng, SANITIZER_TOOLS);
      let report;
      try {
        report = await importSanitizerReport(path, null, tool);
      } catch (error) {
        if (error instanceof SanitizerImportError) return 'refused: SanitizerImportError';
        throw error;
      }
      const checked = sanitizeReportSchema.safeParse(JSON.parse(JSON.stringify({ ...report, rawXml: undefined })));
      if (!checked.success)
        throw new DisagreementError(`the host refuses the report: ${checked.error.issues[0]?.path.join('.')}: ${checked.error.issues[0]?.message}`);
      const again = chunked(rng, Buffer.from(bytes).toString('utf8'), report.tool);
      const read = report.findings + (report.heldAtExit ?? []).reduce((n, h) => n + h.blocks, 0);
      if (again.findings !== read) throw new DisagreementError(`streamed from its file it has ${read} findings, in random chunks ${again.findings}`);
      // The XML reader never throws: what it cannot read (or cuts) it says in a problem, beside what it read before.
      return report.problems.length ? 'read, with a problem in words' : 'accepted';
    },
  };
}
