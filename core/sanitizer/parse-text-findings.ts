import {
  newFinding,
  DEFAULT_MAX_FINDINGS,
  type Dim3,
  type DeviceLocation,
  type HostFrame,
  type RaceSide,
  type SanitizerFinding,
  type SanitizerTool,
} from './findings';
import { hazardType } from './parse-xml';
import { plural } from '../format';

/**
 * The findings themselves from compute-sanitizer's text output: what the tool printed as it went. The XML
 * (`--xml --save`) is written only when the tool ends its run in order; when the program under it crashes or is
 * killed (a runner that dies after a sticky CUDA error: test/fixtures/sanitizer/h100/gallery-null-pointer-broken.txt,
 * exit 139, no XML at all), the XML is missing or cut off, but every finding printed so far is in the text.
 *
 * Each record is turned into the same SanitizerFinding the XML parser makes of the same record (the fixtures hold
 * both for the same runs, and test/unit/sanitizer-text-findings.test.ts compares them field by field), except for
 * what the text does not carry:
 *
 * - `where.path` (and the race sides' `where.path`): the text prints the file's basename (`sanitizer_cases.cu`),
 *   the XML the full path; the basename is kept as the text gives it.
 * - `hostStack`: the text prints only some of the frames the XML saves (it leaves out most of the driver's and the
 *   CUDA runtime's own frames, and the C runtime's below `main`), and a frame's `module` as a basename
 *   (`cases`, where the XML has `/tmp/cases`), a Python frame's `file` as a basename (`leak.py`). The frames it
 *   prints are the XML's frames, in the same order, with the same pc and line.
 * - `func` (device and host): the text prints the demangled signature (`offByOne(float *, int)`); the XML names
 *   the function without its parameter list (`offByOne`, `cudaError cudaMalloc<float>`), so the parameter list
 *   (the last balanced parenthesised group at the end) is taken off.
 * - `nearest`: left null here, as the XML parser does; `mergeText` puts the text's notes in, for either.
 * - Records whose kind the text does not name and this parser does not know (a hardware exception, a device-side
 *   malloc error: forms not seen in the fixtures) are kept when they name a device place or a thread, with
 *   `recordKind: '?'` and kind 'device-error', the header line as `text`.
 *
 * One pass over the lines, each line looked at once with anchored patterns and index searches: linear in the input.
 * Bounded like the XML parser: `maxFindings` kept (the rest counted), `maxFramesPerRecord` host frames per record,
 * and lines cut at `maxLineLength` characters before they are read.
 */

export interface SanitizerTextFindingsLimits {
  /** Findings kept; records past it are counted, not kept (the XML parser's default). */
  maxFindings: number;
  /** Host frames kept per record; the rest of a longer stack is left out. */
  maxFramesPerRecord: number;
  /** A line longer than this is read for its first this-many characters. */
  maxLineLength: number;
}

export const DEFAULT_SANITIZER_TEXT_LIMITS: SanitizerTextFindingsLimits = {
  maxFindings: DEFAULT_MAX_FINDINGS,
  maxFramesPerRecord: 1_000,
  maxLineLength: 65_536,
};

export interface SanitizerTextFindings {
  findings: SanitizerFinding[];
  /** Every finding record read, kept or not. */
  records: number;
  /** Records past maxFindings: counted, not kept. */
  dropped: number;
  /** Sentences for the user when a bound was reached; empty otherwise. */
  problems: string[];
}

const PREFIX = '=========';
/** The line BoundedOutput puts where it left output out (main/tools/bounded-output.ts): a record cannot run across it. */
const OUTPUT_GAP = /^\[… [\d,]+ bytes of output not kept …\]$/;

/** `4,000` as 4000; null when not a safe integer. */
const num = (s: string | undefined): number | null => {
  if (s === undefined) return null;
  const n = Number(s.replace(/,/g, ''));
  return Number.isSafeInteger(n) ? n : null;
};
const dim = (x: string | undefined, y: string | undefined, z: string | undefined): Dim3 | null => {
  const [a, b, c] = [num(x), num(y), num(z)];
  return a === null || b === null || c === null ? null : { x: a, y: b, z: c };
};
const HEX = /^0x[0-9a-fA-F]+$/;

/**
 * `offByOne(float *, int)` -> `offByOne`; `cudaError cudaMalloc<float>(float**, unsigned long)` ->
 * `cudaError cudaMalloc<float>`: the last balanced parenthesised group at the end (and a `const` after it) taken
 * off, as the XML names functions. A name that does not end in one is kept whole.
 */
export function withoutParameters(name: string): string {
  // `f(long, int) [clone .constprop.124]`: the XML keeps the clone suffix and drops the parameters.
  const clone = name.endsWith(']') ? name.lastIndexOf(' [clone ') : -1;
  if (clone > 0 && name.indexOf(']', clone) === name.length - 1) return `${withoutParameters(name.slice(0, clone))}${name.slice(clone)}`;
  let end = name.length;
  if (name.endsWith(' const')) end -= ' const'.length;
  if (name[end - 1] !== ')') return name;
  let depth = 0;
  for (let i = end - 1; i >= 0; i--) {
    const c = name[i];
    if (c === ')') depth++;
    else if (c === '(' && --depth === 0) {
      const head = name.slice(0, i).trimEnd();
      return head === '' ? name : head;
    }
  }
  return name;
}

/** `offByOne(float *, int)+0xc0 in sanitizer_cases.cu:12`, or without ` in file:line` when built without -lineinfo. */
export function parseDeviceLocation(s: string): DeviceLocation {
  const text = s.trim();
  const plus = text.lastIndexOf('+0x');
  if (plus > 0) {
    let j = plus + 3;
    while (j < text.length && /[0-9a-fA-F]/.test(text[j]!)) j++;
    const pc = text.slice(plus + 1, j);
    const rest = text.slice(j);
    if (pc.length > 2 && (rest === '' || rest.startsWith(' in '))) {
      const func = withoutParameters(text.slice(0, plus));
      if (rest === '') return { func, path: null, line: null, pc };
      const place = rest.slice(4).trim();
      const colon = place.lastIndexOf(':');
      const line = colon > 0 && /^\d+$/.test(place.slice(colon + 1)) ? num(place.slice(colon + 1)) : null;
      return { func, path: line === null ? place || null : place.slice(0, colon), line, pc };
    }
  }
  return { func: withoutParameters(text) || '?', path: null, line: null, pc: null };
}

/**
 * One `Host Frame:` line, what follows the colon: `main [0x8d80] in cases`, ` [0x41b5d] in libcudart.so.13.0.96`
 * (no symbol), `f(long) in driver.cpp:8369 [0xda7f] in driver.so` (a symbol with its place), `<module> in leak.py:24`
 * (a Python frame), or the older `/usr/lib/libcuda.so (cuLaunchKernel + 0x2c5) [0x204dc5]`.
 */
export function parseHostFrame(s: string): HostFrame {
  const close = s.lastIndexOf('] in ');
  if (close >= 0) {
    const open = s.lastIndexOf('[', close);
    const pc = open >= 0 ? s.slice(open + 1, close) : '';
    if (HEX.test(pc)) {
      // With debug info the symbol is followed by its place: `f(long) in driver.cpp:8369 [0xda7f] in driver.so`.
      let head = s.slice(0, open).trim();
      const place = / in (\S+):(\d+)$/.exec(head);
      if (place) head = head.slice(0, place.index).trim();
      const func = withoutParameters(head);
      return { func: func || null, module: s.slice(close + 5).trim() || null, pc, file: place ? place[1]! : null, line: place ? num(place[2]!) : null };
    }
  }
  const t = s.trim();
  if (t.endsWith(']')) {
    const open = t.lastIndexOf(' [');
    const pc = open >= 0 ? t.slice(open + 2, -1) : '';
    if (HEX.test(pc)) {
      // The older form: the module, then the symbol and offset in parentheses.
      const before = t.slice(0, open).trim();
      const paren = before.endsWith(')') ? before.indexOf(' (') : -1;
      if (paren > 0) {
        const inside = before.slice(paren + 2, -1);
        const plus = inside.lastIndexOf(' + 0x');
        const func = (plus >= 0 ? inside.slice(0, plus) : inside).trim();
        return { func: func ? withoutParameters(func) : null, module: before.slice(0, paren).trim() || null, pc, file: null, line: null };
      }
      return { func: null, module: before || null, pc, file: null, line: null };
    }
  }
  const at = t.lastIndexOf(' in ');
  if (at >= 0) {
    const place = t.slice(at + 4).trim();
    const colon = place.lastIndexOf(':');
    const func = t.slice(0, at).trim() || null;
    if (colon > 0 && /^\d+$/.test(place.slice(colon + 1)))
      return { func, module: null, pc: null, file: place.slice(0, colon), line: num(place.slice(colon + 1)) };
    return { func, module: place || null, pc: null, file: null, line: null };
  }
  return { func: t || null, module: null, pc: null, file: null, line: null };
}

// --- the lines a record is made of -----------------------------------------------------------------------------

const SEVERITY = /^(Error|Warning|Info):\s*/i;
const INVALID = /^Invalid (\S+) (\S+) of size (\d[\d,]*)(?: bytes?)?$/;
const UNINITIALISED = /^Uninitiali[sz]ed (\S+) memory (\S+) of size (\d[\d,]*)(?: bytes?)?$/;
const LEAKED = /^Leaked (\d[\d,]*) (bytes?)(?: at (0x[0-9a-fA-F]+))?/;
const PROGRAM_HIT = /^Program hit (\S+) \(error (\d+)\)/;
const ON_CALL = ' on CUDA API call to ';
const RACE = /^Race reported between (\S+) access at /;
const HAZARD = /^Potential (\S+) hazard detected at (\S+) (0x[0-9a-fA-F]+) in block \((\d+),(\d+),(\d+)\)\s*:?$/;

const BY_THREAD = /^by thread \((\d+),(\d+),(\d+)\) in block \((\d+),(\d+),(\d+)\)/;
const ADDRESS = /^(?:Access to|Address) (0x[0-9a-fA-F]+)(?: (is|was|has been) (.+?))?\.?$/;
const SAVED = /^Saved host backtrace up to driver entry point(?: at (.+?))?\.?$/;
const HOST_FRAME = 'Host Frame:';
const RACE_SECOND = /^and (\S+) access at /;
const HAZARDS = / \[(\d[\d,]*) hazards?\]$/;
const HAZARD_SIDE = /^(\S+) Thread \((\d+),(\d+),(\d+)\) at /;

type Kind = 'Precise' | 'Initcheck' | 'Leak' | 'Api' | 'Analysis' | 'Hazard' | 'Synccheck' | '?';

/** A record while its lines come in. */
interface Draft {
  kind: Kind;
  severity: SanitizerFinding['severity'];
  header: string;
  where: DeviceLocation | null;
  thread: Dim3 | null;
  block: Dim3 | null;
  space: string | null;
  direction: string | null;
  size: number | null;
  address: string | null;
  verb: string | null;
  error: string | null;
  race: { type: string | null; first: RaceSide; second: RaceSide | null; hazards: number; address: string | null } | null;
  hostStackAt: string | null;
  hostStack: HostFrame[];
  framesCut: boolean;
  /** Whether it is kept when it ends: known kinds always, an unknown header only with a device place or a thread. */
  keep: boolean;
}

const draft = (kind: Kind, severity: SanitizerFinding['severity'], header: string): Draft => ({
  kind,
  severity,
  header,
  where: null,
  thread: null,
  block: null,
  space: null,
  direction: null,
  size: null,
  address: null,
  verb: null,
  error: null,
  race: null,
  hostStackAt: null,
  hostStack: [],
  framesCut: false,
  keep: kind !== '?',
});

/** Lines that start with no indent but are the tool about its run, never a finding. */
const NOT_A_RECORD = /^(?:COMPUTE-SANITIZER$|(?:ERROR|LEAK|RACECHECK) SUMMARY:|Target application |Internal (?:Compute )?Sanitizer Error|Note:)/;

/**
 * Whether one of the tool's lines (its `========= ` prefix taken off) starts a finding of a kind it reports:
 * what progress counts while the run goes on, by the same rules the parser uses.
 */
export function isFindingHeader(tool: SanitizerTool, line: string): boolean {
  if (!line || line.startsWith(' ')) return false;
  const d = startRecord(tool, line);
  return d !== null && d.kind !== '?';
}

/** A record's first line (no indent), or null for the tool talking about its run. */
function startRecord(tool: SanitizerTool, line: string): Draft | null {
  if (NOT_A_RECORD.test(line)) return null;
  const sev = SEVERITY.exec(line);
  const severity: SanitizerFinding['severity'] = sev ? (sev[1]!.toLowerCase() as SanitizerFinding['severity']) : 'error';
  const body = sev ? line.slice(sev[0].length) : line;
  let m: RegExpExecArray | null;
  if ((m = INVALID.exec(body))) {
    const d = draft('Precise', severity, body);
    d.space = m[1]!;
    d.direction = m[2]!;
    d.size = num(m[3]);
    return d;
  }
  if ((m = UNINITIALISED.exec(body))) {
    const d = draft('Initcheck', severity, body);
    d.space = m[1]!;
    d.direction = m[2]!;
    d.size = num(m[3]);
    return d;
  }
  if ((m = LEAKED.exec(body))) {
    // The XML's sentence has neither the separators nor the address: `Leaked 4000 bytes`.
    const d = draft('Leak', severity, `Leaked ${num(m[1]) ?? m[1]} ${m[2]}`);
    d.size = num(m[1]);
    d.address = m[3] ?? null;
    return d;
  }
  if (body.startsWith('Program hit ')) return draft('Api', severity, body);
  if ((m = RACE.exec(body))) {
    const d = draft('Analysis', severity, 'Race condition');
    d.race = {
      type: null,
      first: { access: m[1]!, thread: null, where: parseDeviceLocation(body.slice(m[0].length)) },
      second: null,
      hazards: 1,
      address: null,
    };
    return d;
  }
  if ((m = HAZARD.exec(body))) {
    const d = draft('Hazard', severity, `Potential ${m[1]!} hazard detected`);
    d.space = m[2]!;
    d.block = dim(m[4], m[5], m[6]);
    d.race = { type: m[1]!, first: { access: null, thread: null, where: null }, second: null, hazards: 1, address: m[3]! };
    return d;
  }
  if (tool === 'synccheck' && body.includes(' detected.')) return draft('Synccheck', severity, body);
  return draft('?', severity, body);
}

/** One indented line of the record (trimmed). */
function addDetail(d: Draft, line: string, maxFrames: number): void {
  let m: RegExpExecArray | null;
  if (line.startsWith(HOST_FRAME)) {
    if (d.hostStack.length < maxFrames) d.hostStack.push(parseHostFrame(line.slice(HOST_FRAME.length)));
    else d.framesCut = true;
  } else if (line.startsWith('at ')) {
    d.where = parseDeviceLocation(line.slice(3));
    if (d.kind === '?') d.keep = true;
  } else if ((m = BY_THREAD.exec(line))) {
    d.thread = dim(m[1], m[2], m[3]);
    d.block = dim(m[4], m[5], m[6]);
    if (d.kind === '?') d.keep = true;
  } else if ((m = ADDRESS.exec(line))) {
    d.address = m[1]!;
    d.verb = m[2] ?? null;
    d.error = m[3] ?? null;
  } else if ((m = SAVED.exec(line))) {
    d.hostStackAt = m[1] ?? null;
  } else if (d.race !== null && d.kind === 'Analysis' && (m = RACE_SECOND.exec(line))) {
    let rest = line.slice(m[0].length);
    const h = HAZARDS.exec(rest);
    if (h) {
      d.race.hazards = num(h[1]) ?? 1;
      rest = rest.slice(0, h.index);
    }
    d.race.second = { access: m[1]!, thread: null, where: parseDeviceLocation(rest) };
  } else if (d.race !== null && d.kind === 'Hazard' && (m = HAZARD_SIDE.exec(line))) {
    const side: RaceSide = { access: m[1]!, thread: dim(m[2], m[3], m[4]), where: parseDeviceLocation(line.slice(m[0].length)) };
    if (d.race.first.where === null && d.race.first.access === null) d.race.first = side;
    else if (d.race.second === null) d.race.second = side;
  }
}

const KINDS: Record<Kind, SanitizerFinding['kind']> = {
  Precise: 'memory-access',
  Initcheck: 'uninitialised-read',
  Leak: 'leak',
  Api: 'api-error',
  Analysis: 'race',
  Hazard: 'race',
  Synccheck: 'barrier',
  '?': 'device-error',
};

const readOrWrite = (s: string | null): 'read' | 'write' | null => {
  const l = s?.toLowerCase();
  return l === 'read' || l === 'write' ? l : null;
};

function toFinding(tool: SanitizerTool, d: Draft): SanitizerFinding {
  const finding = newFinding({
    tool,
    kind: KINDS[d.kind],
    recordKind: d.kind,
    severity: d.severity,
    text: d.header,
    where: d.where,
    thread: d.thread,
    block: d.block,
    hostStackAt: d.hostStackAt,
    hostStack: d.hostStack,
  });
  switch (d.kind) {
    case 'Precise':
      // The XML's sentence is the header and the address line's verdict: `… of size 4 bytes is out of bounds`.
      if (d.error !== null) finding.text = `${d.header} ${d.verb ?? 'is'} ${d.error}`;
      finding.access = { direction: readOrWrite(d.direction), space: d.space, size: d.size, address: d.address, error: d.error };
      break;
    case 'Initcheck':
      finding.access = { direction: readOrWrite(d.direction), space: d.space, size: d.size, address: d.address, error: null };
      break;
    case 'Leak':
      finding.leak = { bytes: d.size ?? 0, address: d.address };
      break;
    case 'Api': {
      const h = d.header;
      const m = PROGRAM_HIT.exec(h);
      const on = h.lastIndexOf(ON_CALL);
      const call = on >= 0 ? h.slice(on + ON_CALL.length).replace(/\.$/, '') : '?';
      const due = h.indexOf(' due to "');
      const message = due >= 0 && on > due ? h.slice(due + ' due to "'.length, on).replace(/"$/, '') : null;
      const error = m ? m[1]! : (/^Program hit (\S+)/.exec(h)?.[1] ?? '?');
      finding.api = { call: call || '?', error, code: m ? num(m[2]) : null, message: message || null };
      break;
    }
    case 'Analysis': {
      const r = d.race!;
      const second = r.second ?? { access: null, thread: null, where: null };
      finding.race = { type: hazardType(r.first.access, second.access), first: r.first, second, hazards: r.hazards, address: null };
      finding.where = r.first.where;
      break;
    }
    case 'Hazard': {
      const r = d.race!;
      const second = r.second ?? { access: null, thread: null, where: null };
      finding.race = { type: r.type, first: r.first, second, hazards: 1, address: r.address };
      finding.thread = r.first.thread;
      finding.where = r.first.where;
      break;
    }
    case 'Synccheck': {
      // `Barrier error detected. Divergent thread(s) in warp.`: the XML's text, then its type.
      const at = d.header.indexOf(' detected.');
      finding.text = d.header.slice(0, at);
      const detail = d.header
        .slice(at + ' detected.'.length)
        .trim()
        .replace(/\.$/, '');
      finding.detail = detail || null;
      break;
    }
    case '?':
      if (d.address !== null) finding.access = { direction: null, space: null, size: null, address: d.address, error: d.error };
      break;
  }
  return finding;
}

/**
 * The findings in compute-sanitizer's text output (the whole of what it printed: its `========= ` lines are
 * picked out; the program's own lines between them are passed over).
 */
export function parseSanitizerTextFindings(tool: SanitizerTool, text: string, limits: Partial<SanitizerTextFindingsLimits> = {}): SanitizerTextFindings {
  const lim: SanitizerTextFindingsLimits = { ...DEFAULT_SANITIZER_TEXT_LIMITS, ...limits };
  const findings: SanitizerFinding[] = [];
  let records = 0;
  let dropped = 0;
  let framesCut = false;
  let current: Draft | null = null;
  /** Past maxFindings: the record's lines are passed over, the record counted. */
  let skipping = false;

  const finish = () => {
    if (current !== null && current.keep) {
      records++;
      framesCut ||= current.framesCut;
      findings.push(toFinding(tool, current));
      if (findings.length >= lim.maxFindings) skipping = true;
    }
    current = null;
  };

  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let raw = text.slice(start, Math.min(end, start + lim.maxLineLength + PREFIX.length + 1));
    start = end + 1;
    if (raw.endsWith('\r')) raw = raw.slice(0, -1);
    if (!raw.startsWith(PREFIX) || (raw.length > PREFIX.length && raw[PREFIX.length] !== ' ')) {
      // The program's own output, passed over; but where output was left out, the record before the gap ends there.
      if (OUTPUT_GAP.test(raw)) finish();
      continue;
    }
    const line = raw.slice(PREFIX.length + 1);
    const body = line.trim();
    if (body === '') {
      finish();
      continue;
    }
    if (line[0] !== ' ' && line[0] !== '\t') {
      finish();
      if (skipping) {
        // Only count what would have been a finding: the same test as a kept record, on its header alone.
        const d = startRecord(tool, body);
        if (d !== null && d.kind !== '?') {
          records++;
          dropped++;
        }
        continue;
      }
      current = startRecord(tool, body);
      continue;
    }
    if (current !== null) addDetail(current, body, lim.maxFramesPerRecord);
  }
  finish();

  const problems: string[] = [];
  if (dropped > 0) {
    problems.push(
      `Only the first ${plural(lim.maxFindings, 'finding')} of the text output are kept: ${plural(dropped, 'more record')} ${dropped === 1 ? 'was' : 'were'} counted and left out, ` +
        `so counts in the groups are lower bounds. Fewer findings come out with compute-sanitizer's --print-limit N, or by fixing the first groups and running again.`,
    );
  }
  if (framesCut) problems.push(`Some records printed more than ${plural(lim.maxFramesPerRecord, 'host frame')}; only their first frames were kept.`);
  return { findings, records, dropped, problems };
}

/**
 * Which tool printed a text output, from what it printed (the text never names it): racecheck's summary or hazard
 * records, initcheck's records, synccheck's `… detected.` records; memcheck's records or summary alone say memcheck.
 * Null when nothing in it tells (a clean run's `ERROR SUMMARY: 0 errors` is printed by three of the four).
 */
export function toolFromText(text: string): SanitizerTool | null {
  if (/^========= RACECHECK SUMMARY:/m.test(text)) return 'racecheck';
  const kinds = new Set(parseSanitizerTextFindings('synccheck', text, { maxFindings: 64 }).findings.map((f) => f.recordKind));
  if (kinds.has('Hazard') || kinds.has('Analysis')) return 'racecheck';
  if (kinds.has('Initcheck')) return 'initcheck';
  if (kinds.has('Synccheck')) return 'synccheck';
  if (kinds.size > 0 && [...kinds].some((k) => k !== '?')) return 'memcheck';
  return null;
}
