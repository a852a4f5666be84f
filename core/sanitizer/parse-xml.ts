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

export function createSanitizerXmlParser(tool: SanitizerTool, limits: Partial<SanitizerXmlLimits> = {}): SanitizerXmlParser {
  const lim: SanitizerXmlLimits = { ...DEFAULT_SANITIZER_XML_LIMITS, ...limits };
  const findings: SanitizerFinding[] = [];
  const problems: string[] = [];
  let records = 0;
  let dropped = 0;
  let stopped = false;
  let closed = false;
  let rootOpened = false;
  let rootClosed = false;
  let depth = 0;
  /** The name of each open element (only the names: the tree is kept for the open record alone). */
  const open: string[] = [];
  /** The open record's elements, innermost last; empty outside a record. */
  const stack: Node[] = [];
  let recordElements = 0;
  let recordOverflow = false;
  let skipRecord = false;
  let textCut = false;
  let elementsCut = false;
  /** Characters handed to saxes since it last reported anything: what it holds in its own buffers. */
  let sinceEvent = 0;
  /** The end of the previous chunk, while the root is not open yet, to find `<!DOCTYPE` across chunks. */
  let prelude = '';

  const findingsSoFar = (before = 'it') =>
    findings.length === 0
      ? `No finding was read before ${before}.`
      : `The ${plural(findings.length, 'finding')} read before ${before} ${findings.length === 1 ? 'is' : 'are'} shown.`;

  const parser = new SaxesParser({ position: true });
  const event = () => {
    sinceEvent = 0;
  };

  parser.on('error', (err) => {
    throw new Stop(
      `The XML from compute-sanitizer is not well-formed (${cut(err.message.replace(/\.$/, ''), 1000)}), so reading stopped there. ${findingsSoFar()} ` +
        `Was the file written by something else, or edited? Take it as compute-sanitizer wrote it (--xml --save FILE), or run the tool again.`,
    );
  });
  parser.on('doctype', () => {
    throw new Stop(refuseDoctype());
  });
  // saxes keeps each handler as a property set on the parser after construction: past six or so, V8 turns the
  // object to dictionary mode and parsing runs 5x slower. So only what is needed: no xmldecl, comment or
  // processing-instruction handlers (compute-sanitizer writes none after its declaration).

  parser.on('opentag', (tag) => {
    event();
    depth++;
    if (depth > lim.maxDepth) {
      throw new Stop(
        `The XML nests elements more than ${lim.maxDepth} deep (at <${cut(tag.name, NAME_SHOWN)}>); compute-sanitizer's go 6 deep, so this is not its output, or it is damaged. ` +
          `Reading stopped there. ${findingsSoFar()} Take the XML as compute-sanitizer wrote it (--xml --save FILE).`,
      );
    }
    open.push(tag.name);
    if (depth === 1) {
      if (tag.name !== ROOT) {
        throw new Stop(
          `This XML is not compute-sanitizer's: its root element is <${cut(tag.name, NAME_SHOWN)}>, where compute-sanitizer writes <${ROOT}>. ` +
            `Nothing was read from it. Open the file that compute-sanitizer --xml --save FILE wrote.`,
        );
      }
      rootOpened = true;
      return;
    }
    if (depth === 2) {
      if (tag.name !== 'record') return;
      recordElements = 0;
      recordOverflow = false;
      skipRecord = findings.length >= lim.maxFindings;
      if (!skipRecord) stack.push({ name: 'record', text: '', children: [] });
      return;
    }
    if (stack.length === 0 || skipRecord) return;
    if (recordOverflow || ++recordElements > lim.maxElementsPerRecord) {
      recordOverflow = true;
      elementsCut = true;
      return;
    }
    const node: Node = { name: tag.name, text: '', children: [] };
    stack[stack.length - 1]!.children.push(node);
    stack.push(node);
  });

  const onText = (text: string) => {
    event();
    const node = stack[stack.length - 1];
    // Only the element the tag stack says is open takes text (an element past the record's limit is not on it).
    if (node === undefined || open[open.length - 1] !== node.name || depth - 2 !== stack.length - 1) return;
    if (node.text.length + text.length > lim.maxTextLength) {
      textCut = true;
      node.text = (node.text + text).slice(0, lim.maxTextLength);
    } else node.text += text;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);

  parser.on('closetag', (tag) => {
    event();
    open.pop();
    const at = depth;
    depth--;
    if (at === 1) {
      rootClosed = true;
      return;
    }
    if (at === 2) {
      if (tag.name !== 'record') return;
      records++;
      const record = stack.pop();
      stack.length = 0;
      if (record === undefined || skipRecord) {
        dropped++;
        return;
      }
      findings.push(toFinding(tool, record));
      return;
    }
    if (stack.length > 0 && !skipRecord && at - 2 === stack.length - 1 && stack[stack.length - 1]!.name === tag.name) stack.pop();
  });

  function refuseDoctype(): string {
    return (
      `The XML declares a DOCTYPE. compute-sanitizer never writes one, and a DOCTYPE can define entities that expand a few bytes into gigabytes ` +
      `(the "billion laughs" attack), so the workbench refuses the file and read nothing from it. ` +
      `Take the XML straight from compute-sanitizer --xml --save FILE; if you built this file yourself, remove its <!DOCTYPE …>.`
    );
  }

  function stop(problem: string) {
    stopped = true;
    problems.push(problem);
  }

  function feed(slice: string) {
    if (!rootOpened) {
      // A DOCTYPE comes before the root element: refuse it as soon as it shows, before saxes reads its subset.
      const look = prelude + slice;
      if (look.includes('<!DOCTYPE')) throw new Stop(refuseDoctype());
      prelude = look.slice(-16);
    }
    parser.write(slice);
    sinceEvent += slice.length;
    if (sinceEvent > lim.maxTextLength + SLICE) {
      const inside = open.length > 0 ? ` inside <${cut(open[open.length - 1]!, NAME_SHOWN)}>` : '';
      throw new Stop(
        `The XML holds more than ${plural(lim.maxTextLength, 'character')} without markup${inside}; compute-sanitizer writes nothing that long, ` +
          `so the file is damaged or not its output, and reading stopped there rather than hold it in memory. ${findingsSoFar()} ` +
          `Take the XML as compute-sanitizer wrote it (--xml --save FILE), or run the tool again.`,
      );
    }
  }

  return {
    write(chunk: string) {
      if (stopped || closed) return;
      try {
        for (let i = 0; i < chunk.length; i += SLICE) feed(chunk.length <= SLICE ? chunk : chunk.slice(i, i + SLICE));
      } catch (e) {
        if (e instanceof Stop) stop(e.problem);
        else stop(`Reading the XML failed (${e instanceof Error ? e.message : String(e)}). ${findingsSoFar()} Run compute-sanitizer again.`);
      }
    },
    close(): SanitizerXmlResult {
      if (!closed && !stopped) {
        if (!rootOpened) {
          stop(
            `The XML file holds no compute-sanitizer output: the tool wrote nothing, so it failed to start or died at once. ` +
              `Its text output (what it printed on the terminal) says why; run it again and look there.`,
          );
        } else if (!rootClosed) {
          const partial = stack.length > 0 || (depth >= 2 && open[1] === 'record') ? ' The record being written when it stopped is left out.' : '';
          stop(
            `The XML stops before its closing </${ROOT}>: the output was cut off, so compute-sanitizer or the program it ran died ` +
              `(killed, out of memory, a crash, a time limit) before the tool finished writing. ${findingsSoFar('the cut')} There may have been more.${partial} ` +
              `Run it again, and check the program's own exit status and output for why it died.`,
          );
        } else {
          try {
            parser.close();
          } catch (e) {
            if (e instanceof Stop) stop(e.problem);
          }
        }
      }
      closed = true;
      if (dropped > 0) {
        problems.push(
          `Only the first ${plural(lim.maxFindings, 'finding')} are kept: ${plural(dropped, 'more record')} ${dropped === 1 ? 'was' : 'were'} counted and left out, ` +
            `so counts in the groups are lower bounds. Fewer findings come out with compute-sanitizer's --print-limit N, or by fixing the first groups and running again.`,
        );
      }
      if (textCut) {
        problems.push(
          `Some text in the XML was longer than ${plural(lim.maxTextLength, 'character')} and was cut to that length; the findings are otherwise whole.`,
        );
      }
      if (elementsCut) {
        problems.push(
          `Some records held more than ${plural(lim.maxElementsPerRecord, 'element')} (a very deep host stack); only their first elements were read.`,
        );
      }
      return { findings, problems, records, dropped, complete: !stopped && rootClosed };
    },
  };
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
