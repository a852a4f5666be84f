import { SaxesParser } from 'saxes';

import {
  DEFAULT_MAX_FINDINGS,
  FINDING_LIMITS as L,
  newFinding,
  type Dim3,
  type DeviceLocation,
  type FindingKind,
  type HostFrame,
  type RaceSide,
  type SanitizerFinding,
  type SanitizerTool,
} from './findings';
import { plural } from '../format';

/**
 * compute-sanitizer's XML (`--xml --save FILE`), read as a stream: one `<record>` at a time is turned into a
 * SanitizerFinding, so a 139 MB file never sits in memory as a tree. The file comes from a tool, or a program,
 * that may have died half-way, or from a user who opened some other file: every way it can go wrong ends in
 * the findings read so far plus a problem a person can act on, never in an exception.
 *
 * The shapes follow what compute-sanitizer 2025.3 wrote on an H100 (test/fixtures/sanitizer/h100): record kinds
 * Precise, Leak, Api (memcheck), Initcheck, Hazard and Analysis (racecheck), Synccheck; and on an H200
 * (test/fixtures/programs/h200), Imprecise for a device-side assert. No schema is published; a kind not seen
 * there becomes kind 'other' with the tool's own sentence kept.
 */

export interface SanitizerXmlLimits {
  /** Findings kept; records past it are counted, not kept. */
  maxFindings: number;
  /** The longest run of characters without markup (a text field, an attribute, a comment). */
  maxTextLength: number;
  /** How deep elements may nest (compute-sanitizer's go 6 deep). */
  maxDepth: number;
  /** Elements kept for one record (a host stack of 1,000 frames is 4,000); past it the record's rest is skipped. */
  maxElementsPerRecord: number;
}

export const DEFAULT_SANITIZER_XML_LIMITS: SanitizerXmlLimits = {
  maxFindings: DEFAULT_MAX_FINDINGS,
  maxTextLength: 65_536,
  maxDepth: 32,
  maxElementsPerRecord: 5_000,
};

export interface SanitizerXmlResult {
  findings: SanitizerFinding[];
  /** Sentences for the user: what went wrong with the file, why, and what to do. Empty when all went well. */
  problems: string[];
  /** Every `<record>` read to its end, kept or not. */
  records: number;
  /** Records past maxFindings: counted, not kept. */
  dropped: number;
  /** The file was read to its closing root element with no problem. */
  complete: boolean;
}

export interface SanitizerXmlParser {
  write(chunk: string): void;
  close(): SanitizerXmlResult;
}

const ROOT = 'ComputeSanitizerOutput';
/** Text kept within `max` characters: a field within a bundle's limit for it (a demangled C++ name can be longer than any). */
const cut = (t: string, max: number): string => (t.length > max ? `${t.slice(0, max - 1)}…` : t);
/** An element's name as a problem quotes it: the file's, so any length. */
const NAME_SHOWN = 80;
/** What the parser checks its buffers against: it is given at most this much of a chunk at a time. */
const SLICE = 16_384;

/** An element of one record, kept only until the record ends. */
interface Node {
  name: string;
  text: string;
  children: Node[];
}

/** Thrown from a saxes handler to stop reading at once; caught in write(). */
class Stop {
  constructor(readonly problem: string) {}
}

/** What the reader says when a file goes wrong, each a sentence a person can act on. */
const SAYS = {
  soFar: (findings: number, before = 'it') =>
    findings === 0
      ? `No finding was read before ${before}.`
      : `The ${plural(findings, 'finding')} read before ${before} ${findings === 1 ? 'is' : 'are'} shown.`,
  notWellFormed: (message: string, soFar: string) =>
    `The XML from compute-sanitizer is not well-formed (${cut(message.replace(/\.$/, ''), 1000)}), so reading stopped there. ${soFar} ` +
    `Was the file written by something else, or edited? Take it as compute-sanitizer wrote it (--xml --save FILE), or run the tool again.`,
  doctype: () =>
    `The XML declares a DOCTYPE. compute-sanitizer never writes one, and a DOCTYPE can define entities that expand a few bytes into gigabytes ` +
    `(the "billion laughs" attack), so the workbench refuses the file and read nothing from it. ` +
    `Take the XML straight from compute-sanitizer --xml --save FILE; if you built this file yourself, remove its <!DOCTYPE …>.`,
  tooDeep: (max: number, tag: string, soFar: string) =>
    `The XML nests elements more than ${max} deep (at <${cut(tag, NAME_SHOWN)}>); compute-sanitizer's go 6 deep, so this is not its output, or it is damaged. ` +
    `Reading stopped there. ${soFar} Take the XML as compute-sanitizer wrote it (--xml --save FILE).`,
  notItsRoot: (tag: string) =>
    `This XML is not compute-sanitizer's: its root element is <${cut(tag, NAME_SHOWN)}>, where compute-sanitizer writes <${ROOT}>. ` +
    `Nothing was read from it. Open the file that compute-sanitizer --xml --save FILE wrote.`,
  noMarkup: (max: number, inside: string, soFar: string) =>
    `The XML holds more than ${plural(max, 'character')} without markup${inside}; compute-sanitizer writes nothing that long, ` +
    `so the file is damaged or not its output, and reading stopped there rather than hold it in memory. ${soFar} ` +
    `Take the XML as compute-sanitizer wrote it (--xml --save FILE), or run the tool again.`,
  failed: (message: string, soFar: string) => `Reading the XML failed (${message}). ${soFar} Run compute-sanitizer again.`,
  empty: () =>
    `The XML file holds no compute-sanitizer output: the tool wrote nothing, so it failed to start or died at once. ` +
    `Its text output (what it printed on the terminal) says why; run it again and look there.`,
  cutOff: (soFar: string, partial: boolean) =>
    `The XML stops before its closing </${ROOT}>: the output was cut off, so compute-sanitizer or the program it ran died ` +
    `(killed, out of memory, a crash, a time limit) before the tool finished writing. ${soFar} There may have been more.` +
    `${partial ? ' The record being written when it stopped is left out.' : ''} ` +
    `Run it again, and check the program's own exit status and output for why it died.`,
  kept: (max: number, dropped: number) =>
    `Only the first ${plural(max, 'finding')} are kept: ${plural(dropped, 'more record')} ${dropped === 1 ? 'was' : 'were'} counted and left out, ` +
    `so counts in the groups are lower bounds. Fewer findings come out with compute-sanitizer's --print-limit N, or by fixing the first groups and running again.`,
  textCut: (max: number) => `Some text in the XML was longer than ${plural(max, 'character')} and was cut to that length; the findings are otherwise whole.`,
  elementsCut: (max: number) => `Some records held more than ${plural(max, 'element')} (a very deep host stack); only their first elements were read.`,
};

/**
 * The reading of one file: the state between saxes's events (the open elements' names, the open record's tree, the
 * findings so far), and what it found wrong, said once at close.
 */
class RecordReader {
  readonly findings: SanitizerFinding[] = [];
  readonly problems: string[] = [];
  records = 0;
  dropped = 0;
  stopped = false;
  closed = false;
  rootOpened = false;
  rootClosed = false;
  depth = 0;
  /** The name of each open element (only the names: the tree is kept for the open record alone). */
  readonly open: string[] = [];
  /** The open record's elements, innermost last; empty outside a record. */
  readonly stack: Node[] = [];
  recordElements = 0;
  recordOverflow = false;
  skipRecord = false;
  textCut = false;
  elementsCut = false;
  /** Characters handed to saxes since it last reported anything: what it holds in its own buffers. */
  sinceEvent = 0;
  /** The end of the previous chunk, while the root is not open yet, to find `<!DOCTYPE` across chunks. */
  prelude = '';
  readonly parser = new SaxesParser({ position: true });

  constructor(
    readonly tool: SanitizerTool,
    readonly lim: SanitizerXmlLimits,
  ) {
    const p = this.parser;
    p.on('error', (err) => {
      throw new Stop(SAYS.notWellFormed(err.message, this.soFar()));
    });
    p.on('doctype', () => {
      throw new Stop(SAYS.doctype());
    });
    // saxes keeps each handler as a property set on the parser after construction: past six or so, V8 turns the
    // object to dictionary mode and parsing runs 5x slower. So only what is needed: no xmldecl, comment or
    // processing-instruction handlers (compute-sanitizer writes none after its declaration).
    p.on('opentag', (tag) => this.openTag(tag.name));
    const onText = (text: string) => this.text(text);
    p.on('text', onText);
    p.on('cdata', onText);
    p.on('closetag', (tag) => this.closeTag(tag.name));
  }

  soFar = (before = 'it') => SAYS.soFar(this.findings.length, before);

  openTag(name: string): void {
    this.sinceEvent = 0;
    this.depth++;
    if (this.depth > this.lim.maxDepth) throw new Stop(SAYS.tooDeep(this.lim.maxDepth, name, this.soFar()));
    this.open.push(name);
    if (this.depth === 1) {
      if (name !== ROOT) throw new Stop(SAYS.notItsRoot(name));
      this.rootOpened = true;
      return;
    }
    if (this.depth === 2) {
      if (name !== 'record') return;
      this.recordElements = 0;
      this.recordOverflow = false;
      this.skipRecord = this.findings.length >= this.lim.maxFindings;
      if (!this.skipRecord) this.stack.push({ name: 'record', text: '', children: [] });
      return;
    }
    if (this.stack.length === 0 || this.skipRecord) return;
    if (this.recordOverflow || ++this.recordElements > this.lim.maxElementsPerRecord) {
      this.recordOverflow = true;
      this.elementsCut = true;
      return;
    }
    const node: Node = { name, text: '', children: [] };
    this.stack[this.stack.length - 1]!.children.push(node);
    this.stack.push(node);
  }

  text(text: string): void {
    this.sinceEvent = 0;
    const node = this.stack[this.stack.length - 1];
    // Only the element the tag stack says is open takes text (an element past the record's limit is not on it).
    if (node === undefined || this.open[this.open.length - 1] !== node.name || this.depth - 2 !== this.stack.length - 1) return;
    if (node.text.length + text.length > this.lim.maxTextLength) {
      this.textCut = true;
      node.text = (node.text + text).slice(0, this.lim.maxTextLength);
    } else node.text += text;
  }

  closeTag(name: string): void {
    this.sinceEvent = 0;
    this.open.pop();
    const at = this.depth;
    this.depth--;
    if (at === 1) {
      this.rootClosed = true;
      return;
    }
    if (at === 2) {
      if (name !== 'record') return;
      this.records++;
      const record = this.stack.pop();
      this.stack.length = 0;
      if (record === undefined || this.skipRecord) this.dropped++;
      else this.findings.push(toFinding(this.tool, record));
      return;
    }
    const top = this.stack[this.stack.length - 1];
    if (top && !this.skipRecord && at - 2 === this.stack.length - 1 && top.name === name) this.stack.pop();
  }

  stop(problem: string): void {
    this.stopped = true;
    this.problems.push(problem);
  }

  feed(slice: string): void {
    if (!this.rootOpened) {
      // A DOCTYPE comes before the root element: refuse it as soon as it shows, before saxes reads its subset.
      const look = this.prelude + slice;
      if (look.includes('<!DOCTYPE')) throw new Stop(SAYS.doctype());
      this.prelude = look.slice(-16);
    }
    this.parser.write(slice);
    this.sinceEvent += slice.length;
    if (this.sinceEvent > this.lim.maxTextLength + SLICE) {
      const inside = this.open.length > 0 ? ` inside <${cut(this.open[this.open.length - 1]!, NAME_SHOWN)}>` : '';
      throw new Stop(SAYS.noMarkup(this.lim.maxTextLength, inside, this.soFar()));
    }
  }

  write(chunk: string): void {
    if (this.stopped || this.closed) return;
    try {
      for (let i = 0; i < chunk.length; i += SLICE) this.feed(chunk.length <= SLICE ? chunk : chunk.slice(i, i + SLICE));
    } catch (e) {
      if (e instanceof Stop) this.stop(e.problem);
      else this.stop(SAYS.failed(e instanceof Error ? e.message : String(e), this.soFar()));
    }
  }

  /** Why the file ended where it did, if it did not end as compute-sanitizer ends one. */
  private finish(): void {
    if (!this.rootOpened) return this.stop(SAYS.empty());
    if (!this.rootClosed) {
      const partial = this.stack.length > 0 || (this.depth >= 2 && this.open[1] === 'record');
      return this.stop(SAYS.cutOff(this.soFar('the cut'), partial));
    }
    try {
      this.parser.close();
    } catch (e) {
      if (e instanceof Stop) this.stop(e.problem);
    }
  }

  close(): SanitizerXmlResult {
    if (!this.closed && !this.stopped) this.finish();
    this.closed = true;
    if (this.dropped > 0) this.problems.push(SAYS.kept(this.lim.maxFindings, this.dropped));
    if (this.textCut) this.problems.push(SAYS.textCut(this.lim.maxTextLength));
    if (this.elementsCut) this.problems.push(SAYS.elementsCut(this.lim.maxElementsPerRecord));
    return { findings: this.findings, problems: this.problems, records: this.records, dropped: this.dropped, complete: !this.stopped && this.rootClosed };
  }
}

export function createSanitizerXmlParser(tool: SanitizerTool, limits: Partial<SanitizerXmlLimits> = {}): SanitizerXmlParser {
  const reader = new RecordReader(tool, { ...DEFAULT_SANITIZER_XML_LIMITS, ...limits });
  return { write: (chunk) => reader.write(chunk), close: () => reader.close() };
}

/** The whole text at once: a convenience over createSanitizerXmlParser for files already in memory. */
export function parseSanitizerXml(tool: SanitizerTool, text: string, limits?: Partial<SanitizerXmlLimits>): SanitizerXmlResult {
  const parser = createSanitizerXmlParser(tool, limits);
  parser.write(text);
  return parser.close();
}

// --- one record to one finding -------------------------------------------------------------------------------

const child = (node: Node | undefined, name: string): Node | undefined => {
  if (node === undefined) return undefined;
  for (const c of node.children) if (c.name === name) return c;
  return undefined;
};
const text = (node: Node | undefined, name: string, max: number = L.name): string | null => {
  const c = child(node, name);
  if (c === undefined) return null;
  const t = c.text.trim();
  return t === '' ? null : cut(t, max);
};
const int = (node: Node | undefined, name: string): number | null => {
  const t = text(node, name);
  if (t === null || !/^-?\d+$/.test(t)) return null;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : null;
};
/** A size or a count: never negative (what a group adds up must not go down). */
const count = (node: Node | undefined, name: string): number | null => {
  const n = int(node, name);
  return n === null || n < 0 ? null : n;
};
const dim3 = (node: Node | undefined): Dim3 | null => {
  const x = int(node, 'x');
  const y = int(node, 'y');
  const z = int(node, 'z');
  return node === undefined || x === null || y === null || z === null ? null : { x, y, z };
};
const location = (node: Node | undefined): DeviceLocation | null =>
  node === undefined ? null : { func: text(node, 'func') ?? '?', path: text(node, 'path'), line: int(node, 'line'), pc: text(node, 'pc', L.token) };

const frames = (stack: Node | undefined): HostFrame[] =>
  stack === undefined
    ? []
    : stack.children
        .filter((c) => c.name === 'frame')
        .slice(0, L.frames)
        .map((f) => ({ func: text(f, 'func'), module: text(f, 'module'), pc: text(f, 'pc', L.token), file: text(f, 'path'), line: int(f, 'line') }));

const severityOf = (level: string | null): SanitizerFinding['severity'] => {
  const l = level?.toLowerCase();
  return l === 'warning' ? 'warning' : l === 'info' || l === 'information' ? 'info' : 'error';
};

/** RAW, WAR or WAW from the order of a race's two accesses (Read then Write is a write after read). */
export const hazardType = (first: string | null, second: string | null): string | null => {
  const a = first?.toLowerCase();
  const b = second?.toLowerCase();
  if (a === 'read' && b === 'write') return 'WAR';
  if (a === 'write' && b === 'read') return 'RAW';
  if (a === 'write' && b === 'write') return 'WAW';
  return null;
};

/** Everything a record's own text says, for a kind the parser does not know. */
const flatText = (node: Node): string => [node.text.trim(), ...node.children.map(flatText)].filter((t) => t !== '').join(' ');

const KINDS: Record<string, FindingKind> = {
  Precise: 'memory-access',
  Leak: 'leak',
  Api: 'api-error',
  Initcheck: 'uninitialised-read',
  Hazard: 'race',
  Analysis: 'race',
  Synccheck: 'barrier',
  // A fault the tool could not pin to one access: a device-side assert (`<exception>Warp assert</exception>`), a hardware exception.
  Imprecise: 'device-error',
};

function toFinding(tool: SanitizerTool, record: Node): SanitizerFinding {
  const recordKind = text(record, 'kind', L.word) ?? '?';
  const what = child(record, 'what');
  const who = child(record, 'who');
  const stack = child(record, 'hostStack');
  const kind = Object.hasOwn(KINDS, recordKind) ? KINDS[recordKind]! : 'other';
  const finding = newFinding({
    tool,
    kind,
    recordKind,
    severity: severityOf(text(record, 'level')),
    text: text(what, 'text', L.text) ?? text(what, 'exception', L.text) ?? cut(flatText(what ?? record), L.text),
    where: location(child(record, 'where')),
    thread: dim3(child(who, 'threadIdx')),
    block: dim3(child(who, 'blockIdx')),
    hostStackAt: text(stack, 'saveLocation', L.word),
    hostStack: frames(stack),
  });
  switch (recordKind) {
    case 'Precise': {
      const direction = text(what, 'direction')?.toLowerCase();
      finding.access = {
        direction: direction === 'read' || direction === 'write' ? direction : null,
        space: text(what, 'space', L.word),
        size: count(what, 'size'),
        address: text(what, 'address', L.token),
        error: text(what, 'error'),
      };
      break;
    }
    case 'Initcheck': {
      // The XML gives the address and size only; the sentence says the rest ("Uninitialized __global__ memory read of size 4 bytes").
      const sentence = /\b(__\w+__)\s+memory\s+(read|write)\b/i.exec(finding.text);
      const direction = sentence?.[2]?.toLowerCase();
      finding.access = {
        direction: direction === 'read' || direction === 'write' ? direction : null,
        space: sentence?.[1] ?? null,
        size: count(what, 'size'),
        address: text(what, 'address', L.token),
        error: null,
      };
      break;
    }
    case 'Leak':
      finding.leak = { bytes: count(what, 'size') ?? 0, address: text(what, 'address', L.token) };
      break;
    case 'Api':
      finding.api = { call: text(what, 'api') ?? '?', error: text(what, 'error') ?? '?', code: int(what, 'result'), message: text(what, 'message') };
      break;
    case 'Hazard': {
      const common = child(what, 'common');
      const side = (n: Node | undefined): RaceSide => ({
        access: text(n, 'access', L.word),
        thread: dim3(child(n, 'threadIdx')),
        where: location(child(n, 'where')),
      });
      const first = side(child(what, 'thread0'));
      const second = side(child(what, 'thread1'));
      finding.race = { type: text(common, 'type', L.hazard), first, second, hazards: 1, address: text(common, 'address', L.token) };
      finding.block = dim3(child(common, 'blockIdx'));
      finding.thread = first.thread;
      finding.where = first.where;
      break;
    }
    case 'Analysis': {
      const source = child(what, 'source');
      const destination = child(what, 'destination');
      const side = (n: Node | undefined): RaceSide => ({ access: text(n, 'direction', L.word), thread: null, where: location(child(n, 'where')) });
      const first = side(source);
      const second = side(destination);
      const hazards = count(destination, 'count') ?? count(source, 'count') ?? count(what, 'count') ?? 1;
      finding.race = { type: hazardType(first.access, second.access), first, second, hazards, address: null };
      finding.where = first.where;
      break;
    }
    case 'Synccheck':
      finding.detail = text(what, 'type');
      break;
    default:
  }
  return finding;
}
