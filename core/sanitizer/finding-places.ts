import { plural, thousands } from '../format';
import { basenameOf, dirnameOf, joinPath } from '../workspace/paths';
import type { DeviceLocation, Dim3, FindingGroup, SourceMapped } from './findings';
import { describeFrame, LINEINFO_ADVICE } from './group';

/**
 * What the findings view and the editor need of a group beyond its sentence: the source lines it names (to
 * open and to mark), which open document a path in a report stands for, and the short labels of a row.
 */

/** A source line a group names: where it happened, both sides of a race, or the user's own host frame. */
export interface FindingPlace {
  /** As the report names it: a full path on the machine that ran the tool, or a name. */
  file: string;
  line: number;
  role: 'at' | 'first' | 'second' | 'frame';
  /**
   * For a CuPy RawKernel's line found again in the user's .py (`file` and `line` are that place): the place the
   * tool named, CuPy's copy of the source (`<sha>.cubin.cu` in a temporary folder, gone after the run). A detail,
   * never a link.
   */
  copy?: { file: string; line: number };
  /** The kernel (or device function) the tool named there: an open file defining it is the file, whatever the path. */
  kernel?: string;
}

const placeOf = (w: DeviceLocation | null, role: FindingPlace['role'], mapped?: SourceMapped | null): FindingPlace | null => {
  if (mapped && mapped.line > 0) return { file: mapped.file, line: mapped.line, role, copy: { file: mapped.cachePath, line: mapped.cacheLine } };
  return w !== null && w.path !== null && w.line !== null && w.line > 0 ? { file: w.path, line: w.line, role, ...(w.func ? { kernel: w.func } : {}) } : null;
};

/**
 * Every source line the group names, the one to go to first. A CuPy kernel's line is its place in the user's .py
 * where it was found there (`sourceMapped`, each side's `raceSourceMapped`), not CuPy's deleted copy the tool named.
 */
export function findingPlaces(g: FindingGroup): FindingPlace[] {
  const out: FindingPlace[] = [];
  const add = (p: FindingPlace | null) => {
    if (p && !out.some((o) => o.file === p.file && o.line === p.line)) out.push(p);
  };
  const race = g.example.race;
  if (g.kind === 'race' && race) {
    add(placeOf(race.first.where, 'first', g.raceSourceMapped?.first));
    add(placeOf(race.second.where, 'second', g.raceSourceMapped?.second));
  }
  add(placeOf(g.where, 'at', g.sourceMapped));
  const frame = g.userFrame;
  if (frame && frame.file !== null && frame.line !== null && frame.line > 0) add({ file: frame.file, line: frame.line, role: 'frame' });
  return out;
}

/**
 * "CuPy compiled it as /tmp/tmp9kuab6ub/856f….cubin.cu:4.": where the tool said a CuPy kernel's line was, for a group
 * whose places were found in the user's .py; null when none was. Said once per copy, whichever sides share it.
 */
export function compiledAs(g: FindingGroup): string | null {
  const copies = [...new Set(findingPlaces(g).flatMap((p) => (p.copy ? [`${p.copy.file}:${p.copy.line}`] : [])))];
  if (!copies.length) return null;
  // The whole source not found in the file as written: the line was found by its own text (findKernelLine), said so.
  const byText = [g.sourceMapped, g.raceSourceMapped?.first, g.raceSourceMapped?.second].some((m) => m?.how === 'line-text');
  const how = byText ? ' Found in your file by the line’s own text: the kernel’s whole source is not in it as written.' : '';
  return `CuPy compiled it as ${copies.join(', ')}.${how}`;
}

/** Code that ran on the device without -lineinfo: the tool named a function and an offset, no line. */
export const lacksLineInfo = (g: FindingGroup): boolean => {
  const race = g.example.race;
  const wheres = g.kind === 'race' && race ? [race.first.where, race.second.where] : [g.where];
  return wheres.some((w) => w !== null && (w.path === null || w.line === null));
};

/** describeGroup's sentence with its -lineinfo advice taken off (the view shows the advice on a line of its own). */
export const withoutLineInfoAdvice = (sentence: string): string => sentence.replace(` ${LINEINFO_ADVICE}`, '');

/**
 * The place a row leads with: `file:line`, else the kernel and offset; for what happened on the host (a
 * leak, an API error), what it was (its sentence names the call that made it).
 */
export function placeLabel(g: FindingGroup): string {
  const first = findingPlaces(g)[0];
  if (first) return `${basenameOf(first.file)}:${first.line}`;
  if (g.where) return `${g.where.func}${g.where.pc !== null ? ` (pc ${g.where.pc})` : ''}`;
  if (g.kind === 'leak') return 'leak';
  if (g.kind === 'api-error') return g.example.api?.call ?? 'API error';
  return g.userFrame ? describeFrame(g.userFrame) : g.tool;
}

/** What one record of a group stands for, by kind: memcheck writes one per thread that faulted, per block leaked, per call that failed. */
const RECORD_NOUN: Partial<Record<FindingGroup['kind'], string>> = {
  'memory-access': 'thread',
  'uninitialised-read': 'thread',
  barrier: 'thread',
  'device-error': 'thread',
  leak: 'allocation',
  'api-error': 'call',
};

/**
 * The count a row shows beside its place, and what it counts (its title). Most groups count the tool's records
 * ("×32": 32 threads); racecheck's count is of hazards — an Analysis record sums up every hazard between the same two
 * lines — so a race row shows the hazards, as its sentence does, and says how many records carried them.
 */
export function countLabel(g: FindingGroup): { text: string; title: string } {
  if (g.kind === 'race' && g.hazards > 0) {
    const hazards = plural(g.hazards, 'hazard');
    const records = plural(g.count, 'record');
    const what = 'a hazard is one pair of accesses, by two threads, that racecheck found unordered';
    return g.hazards === g.count
      ? { text: hazards, title: `${hazards}, one record each: ${what}.` }
      : { text: `${hazards} in ${records}`, title: `${hazards} in ${records}: ${what}, and one record sums up the hazards between the same two lines.` };
  }
  const noun = RECORD_NOUN[g.kind];
  return { text: `×${thousands(g.count)}`, title: noun ? `${plural(g.count, noun)}: one record each` : plural(g.count, 'record') };
}

/** Whether the row should name the user's host frame: its sentence does already for leaks and API errors. */
export const showsFrame = (g: FindingGroup): boolean => g.userFrame !== null && g.kind !== 'leak' && g.kind !== 'api-error';

/** What the user's host frame was doing when the tool saved the stack. */
export function frameLabel(g: FindingGroup): string {
  switch (g.example.hostStackAt) {
    case 'kernel launch time':
      return 'Launched from';
    case 'allocation time':
      return 'Allocated at';
    case 'error':
      return 'Called from';
    default:
      return g.kind === 'leak' ? 'Allocated at' : 'From';
  }
}

const axis = (lo: number, hi: number) => (lo === hi ? String(lo) : `${lo}–${hi}`);
/** A thread or block range per axis: "(0–31,0,0)". */
export const formatRange = (r: { min: Dim3; max: Dim3 }): string => `(${axis(r.min.x, r.max.x)},${axis(r.min.y, r.max.y)},${axis(r.min.z, r.max.z)})`;
const single = (r: { min: Dim3; max: Dim3 }) => r.min.x === r.max.x && r.min.y === r.max.y && r.min.z === r.max.z;

/** "threads (0–62,0,0) · block (0,0,0)"; null when the tool named no thread (leaks, API errors). */
export function threadsLabel(g: FindingGroup): string | null {
  if (g.threads === null && g.blocks === null) return null;
  const parts: string[] = [];
  if (g.threads) parts.push(`${single(g.threads) ? 'thread' : 'threads'} ${formatRange(g.threads)}`);
  if (g.blocks) parts.push(`${single(g.blocks) ? 'block' : 'blocks'} ${formatRange(g.blocks)}`);
  return parts.join(' · ');
}

/** An open document, as far as finding its file goes. */
export interface OpenDocument {
  id: string;
  path: string | null;
  name: string;
}

/** What tells which file a report means, beyond the open documents. */
export interface PlaceHints {
  /** Files the person already pointed out for this report: the path as the report names it → document. */
  chosen: Record<string, string>;
  /** A run made here: its documents by the name the compiler was given. */
  documents: Record<string, string>;
  /** Folders the file may be in: the report's own, the plan's. */
  folders: string[];
}

/**
 * The open document a path in a report stands for, or null when that cannot be told without asking: the
 * document open at that very path; the one the person pointed out before; the run's own document of that
 * name; the only open document with that name; the only one of them beside the report or the plan. The
 * report's path is often another machine's (or a build folder's), so an open file of the same name is taken
 * before one read from that path.
 */
export function documentForPlace(file: string, documents: readonly OpenDocument[], hints: PlaceHints): string | null {
  const open = (id: string | undefined) => (id !== undefined && documents.some((d) => d.id === id) ? id : null);
  const exact = documents.find((d) => d.path === file);
  if (exact) return exact.id;
  const name = basenameOf(file);
  const chosen = open(hints.chosen[file]) ?? open(hints.documents[file]) ?? open(hints.documents[name]);
  if (chosen) return chosen;
  const named = documents.filter((d) => d.name === name);
  if (named.length === 1) return named[0]!.id;
  const beside = named.filter((d) => d.path !== null && hints.folders.some((f) => joinPath(f, name) === d.path));
  return beside.length === 1 ? beside[0]!.id : null;
}

/** The paths to try, in turn, for a file the open documents do not settle: the report's own path, then beside the report or the plan. */
export function placeCandidates(file: string, folders: readonly string[]): string[] {
  const out: string[] = [];
  const add = (p: string) => {
    if (!out.includes(p)) out.push(p);
  };
  if (file.startsWith('/')) add(file);
  for (const folder of folders) add(joinPath(folder, basenameOf(file)));
  return out;
}

/** The folder of every path given (the report's, the plan's, a sample's sources). */
export const foldersOf = (paths: readonly (string | null)[]): string[] => [...new Set(paths.filter((p): p is string => !!p).map(dirnameOf))];
