import * as z from 'zod';

import { schemaFor } from '../api/typed-schema';

import { FINDING_LIMITS as L, SANITIZER_TOOLS, type FindingGroup, type MemoryHolder, type SanitizerTool } from '../sanitizer/findings';
import type { HeldMemory } from '../sanitizer/held-memory';
import type { SanitizeReport } from '../sanitizer/sanitize-report';
import { MAX_RAW_SANITIZER_BYTES } from './bundle-limits';
import { RAW_XML_KEPT_CHARS, RAW_XML_KEPT_FILES } from './raw-xml-text';

/**
 * The sanitizer's part of a bundle: sanitizer.json (the report: verdict, findings grouped by place) and
 * sanitizer/ (what the tool itself wrote: its text, and its XML reports when the exporter has them), each kept
 * within MAX_RAW_SANITIZER_BYTES — the start and the end, since the tool's summary is at the end.
 */

/** Text kept within `max` bytes (UTF-8, roughly: by characters): its start and its end, and a line saying how much was left out. */
export function boundedText(text: string, max = MAX_RAW_SANITIZER_BYTES): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n… ${text.length - 2 * half} characters left out by GPU Workbench (the bundle keeps the first and last ${half}) …\n${text.slice(-half)}`;
}

/** A raw XML report the exporter read, as it goes in. */
export interface RawSanitizerXml {
  name: string;
  text: string;
}

/** The sanitizer/ entries: the tool's text, the program's own output (when any), and each XML report, bounded. */
export function sanitizerRawEntries(report: Pick<SanitizeReport, 'toolOutput' | 'programOutput'>, xml: readonly RawSanitizerXml[]): Map<string, string> {
  const out = new Map<string, string>();
  if (report.toolOutput) out.set('sanitizer/tool-output.txt', boundedText(report.toolOutput));
  if (report.programOutput) out.set('sanitizer/program-output.txt', boundedText(report.programOutput));
  const taken = new Set<string>();
  for (const x of xml.slice(0, 32)) {
    let base = x.name.replace(/^.*[/\\]/, '').replace(/[^\w.+-]/g, '_') || 'report.xml';
    if (!base.endsWith('.xml')) base += '.xml';
    let name = `sanitizer/${base}`;
    for (let i = 2; taken.has(name); i++) name = `sanitizer/${i}-${base}`;
    taken.add(name);
    out.set(name, boundedText(x.text));
  }
  return out;
}

const text = (max: number = L.text) => z.string().max(max);
const dim3 = z.object({ x: z.number(), y: z.number(), z: z.number() });
const location = z.object({ func: text(L.name), path: text(L.name).nullable(), line: z.number().int().nullable(), pc: text(L.token).nullable() });
const frame = z.object({
  func: text(L.name).nullable(),
  module: text(L.name).nullable(),
  pc: text(L.token).nullable(),
  file: text(L.name).nullable(),
  line: z.number().int().nullable(),
});
const raceSide = z.object({ access: text(L.word).nullable(), thread: dim3.nullable(), where: location.nullable() });
const tool = z.enum(SANITIZER_TOOLS as unknown as [SanitizerTool, ...SanitizerTool[]]);
const kind = z.enum(['memory-access', 'leak', 'api-error', 'uninitialised-read', 'race', 'barrier', 'device-error', 'other']);
const finding = z.object({
  tool,
  kind,
  recordKind: text(L.word),
  severity: z.enum(['error', 'warning', 'info']),
  text: text(),
  where: location.nullable(),
  thread: dim3.nullable(),
  block: dim3.nullable(),
  access: z
    .object({
      direction: z.enum(['read', 'write']).nullable(),
      space: text(L.word).nullable(),
      size: z.number().nullable(),
      address: text(L.token).nullable(),
      error: text(L.name).nullable(),
    })
    .nullable(),
  nearest: z.object({ allocation: text(L.token), allocationSize: z.number(), distance: z.number(), side: z.enum(['before', 'after', 'inside']) }).nullable(),
  leak: z.object({ bytes: z.number(), address: text(L.token).nullable() }).nullable(),
  api: z.object({ call: text(L.name), error: text(L.name), code: z.number().nullable(), message: text(L.name).nullable() }).nullable(),
  race: z.object({ type: text(L.hazard).nullable(), first: raceSide, second: raceSide, hazards: z.number(), address: text(L.token).nullable() }).nullable(),
  detail: text(L.name).nullable(),
  hostStackAt: text(L.word).nullable(),
  hostStack: z.array(frame).max(L.frames),
});
/** Who held memory at exit (core/sanitizer/held-memory.ts); the check below keeps this list and MemoryHolder the same. */
const MEMORY_HOLDERS = ['pytorch-caching-allocator', 'cupy-memory-pool', 'cupy-arrays', 'workbench-runner'] as const satisfies readonly MemoryHolder[];
const _everyHolder = (h: MemoryHolder): (typeof MEMORY_HOLDERS)[number] => h;
void _everyHolder;
const holder = z.enum(MEMORY_HOLDERS);
/** A line number someone could go to: a bundle's 0, negative or huge line is not one. */
const sourceLine = z.number().int().min(1).max(100_000_000);
/** A CuPy kernel's line found again in the user's .py, beside CuPy's copy the tool named. */
const sourceMapped = z.object({
  file: text(4096),
  line: sourceLine,
  cachePath: text(4096),
  cacheLine: sourceLine,
  how: z.enum(['whole-source', 'line-text']),
});
/** API errors folded under one fault, at most; a real run has a handful (every later call fails once with the sticky error). */
export const MAX_FOLDED_GROUPS = 10_000;
/** Holders of memory at exit, at most: one entry per rule of HOLDER_RULES. */
const MAX_HOLDERS = 16;
/**
 * A group as a bundle holds it. Folding is one level deep (a fault's followers never have followers of their own):
 * the groups inside `followedBy` and `heldAtExit` are read with this, which has no `followedBy`, so a hostile bundle
 * cannot nest without end.
 */
const flatGroup = z.object({
  key: text(L.key),
  tool,
  kind,
  severity: z.enum(['error', 'warning', 'info']),
  text: text(),
  where: location.nullable(),
  count: z.number().int().min(0),
  threads: z.object({ min: dim3, max: dim3 }).nullable(),
  blocks: z.object({ min: dim3, max: dim3 }).nullable(),
  example: finding,
  userFrame: frame.nullable(),
  leakedBytes: z.number().min(0),
  hazards: z.number().min(0),
  addressNamed: text(4096).nullable().optional(),
  heldBy: holder.nullable().optional(),
  sourceMapped: sourceMapped.nullable().optional(),
  raceSourceMapped: z.object({ first: sourceMapped.nullable(), second: sourceMapped.nullable() }).nullable().optional(),
});
const group = flatGroup.extend({ followedBy: z.array(flatGroup).max(MAX_FOLDED_GROUPS).optional() });
const heldMemory = z.object({
  holder,
  bytes: z.number().min(0),
  blocks: z.number().int().min(0),
  groups: z.array(flatGroup).max(100_000),
});

/** sanitizer.json as read from a bundle someone sent: the shape the Sanitizer tab reads, every string and list bounded. */
export const sanitizeReportSchema = z.object({
  tool,
  command: z.array(text(4096)).max(256),
  cwd: text(4096),
  sanitizer: z.object({ path: text(4096), version: text(256).nullable() }),
  verdict: z.enum(['found', 'clean', 'no-cuda', 'tool-failed', 'timed-out', 'cancelled']),
  headline: text(4096),
  details: z.array(text(16_384)).max(256),
  exitCode: z.number().int().nullable(),
  signal: text(64).nullable(),
  durationMs: z.number().min(0),
  findings: z.number().int().min(0),
  findingsFrom: z.enum(['xml', 'text']),
  groups: z.array(group).max(100_000),
  heldAtExit: z
    .array(heldMemory)
    .max(MAX_HOLDERS)
    .refine((held) => new Set(held.map((h) => h.holder)).size === held.length, 'each holder once')
    .optional(),
  summary: z.object({
    errorsReported: z.number().nullable(),
    warningsReported: z.number().nullable(),
    hazardsDisplayed: z.number().nullable(),
    notPrinted: z.number(),
    leakedBytes: z.number().nullable(),
    leakedAllocations: z.number().nullable(),
    targetReturnedError: z.boolean(),
    toolErrors: z.array(text(4096)).max(256),
  }),
  xmlFiles: z.array(z.object({ name: text(1024), bytes: z.number().min(0) })).max(256),
  programOutput: text(MAX_RAW_SANITIZER_BYTES * 2),
  toolOutput: text(MAX_RAW_SANITIZER_BYTES * 2),
  outputDroppedBytes: z.number().min(0),
  problems: z.array(text(16_384)).max(1024),
  rawXml: z
    .array(z.object({ name: text(1024), text: text(RAW_XML_KEPT_CHARS + 1024) }))
    .max(RAW_XML_KEPT_FILES)
    .optional(),
});

/** A report as sanitize.program, sanitize.open and sanitize.plan answer it, and a bundle's view holds it. */
export const sanitizeAnswerSchema = schemaFor<SanitizeReport>()(sanitizeReportSchema);

// The schema reads what the type says: a compile-time check that they agree.
const _agrees = (r: z.infer<typeof sanitizeReportSchema>): SanitizeReport => r;
void _agrees;
// … and reads every field the types have: zod drops a key it does not name, so a field added to the report, a group
// or the memory held at exit, and not here, would vanish from every bundle. Each of these is `true` only when none is missing.
type Covers<Type, Schema extends z.ZodTypeAny> = Exclude<keyof Type, keyof z.infer<Schema>> extends never ? true : false;
const _coversReport: Covers<SanitizeReport, typeof sanitizeReportSchema> = true;
const _coversGroup: Covers<FindingGroup, typeof group> = true;
const _coversHeld: Covers<HeldMemory, typeof heldMemory> = true;
void [_coversReport, _coversGroup, _coversHeld];
