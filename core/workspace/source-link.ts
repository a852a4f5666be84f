import { basenameOf, dirnameOf, isAbsolutePath, joinPath } from './paths';

/** A place in a source file that a result, a diagnostic or a finding names. */
export interface SourceRef {
  /** As the compiler or the run wrote it: a name ("broken.cu") or a path. */
  file: string;
  line: number;
  column?: number;
  /** The kernel the place is in, when the producer named it (a sanitizer finding): an open file defining it is that file. */
  kernel?: string;
}

/**
 * What a result or diagnostic came from, to find the files it names: the open documents its kernels were
 * compiled from (by name), the paths its plan read them from, the folders of its plan, sample or result file.
 */
export interface SourceContext {
  documents: Record<string, string>;
  paths: string[];
  folders: string[];
  /**
   * Only these documents, found by the file's name: a diagnostic bundle's files, which must never be mixed up
   * with a file of the same path or name on this machine. No path is read.
   */
  onlyDocuments?: boolean;
}

export const EMPTY_SOURCE_CONTEXT: SourceContext = { documents: {}, paths: [], folders: [] };

/** Where the named file is: an open document it was compiled from, else the paths to try in turn. */
export function sourceCandidates(ref: SourceRef, context: SourceContext): { documentId: string | null; paths: string[] } {
  if (context.onlyDocuments) return { documentId: context.documents[ref.file] ?? context.documents[basenameOf(ref.file)] ?? null, paths: [] };
  const documentId = context.documents[ref.file] ?? null;
  const paths: string[] = [];
  const add = (p: string) => {
    if (!paths.includes(p)) paths.push(p);
  };
  if (isAbsolutePath(ref.file)) add(joinPath('/', ref.file));
  for (const p of context.paths) if (basenameOf(p) === basenameOf(ref.file)) add(p);
  if (!isAbsolutePath(ref.file)) for (const folder of context.folders) add(joinPath(folder, ref.file));
  return { documentId, paths };
}

/** An open document, as far as telling which file a link means goes: its path, its name, the kernels it defines. */
export interface OpenSource {
  id: string;
  path: string | null;
  name: string;
  /** The kernels its last good compile defined (entry names); empty when it has not compiled. */
  kernels: readonly string[];
}

/** How many trailing path segments two paths share ("a/b/broken.cu" and "/w/b/broken.cu": 2). */
function sharedTail(a: string, b: string): number {
  const x = a.split(/[\\/]/).filter(Boolean);
  const y = b.split(/[\\/]/).filter(Boolean);
  let n = 0;
  while (n < x.length && n < y.length && x[x.length - 1 - n] === y[y.length - 1 - n]) n++;
  return n;
}

/** A kernel as a tool names it ("ns::scale<float>(float *, int)") to its name as the source defines it ("scale"). */
export function kernelNameOf(func: string): string {
  let name = func.trim();
  const paren = name.indexOf('(');
  if (paren > 0) name = name.slice(0, paren);
  const angle = name.indexOf('<');
  if (angle > 0) name = name.slice(0, angle);
  return name.slice(name.lastIndexOf(':') + 1).trim();
}

/**
 * The open document a link means, when the link's own result, plan or sample did not settle it: the one open
 * file that defines the kernel the link names (a report's path is often another machine's), else the open
 * files whose path ends the way the link's does, the longest such ending, narrowed to those defining the
 * kernel — and only when that leaves exactly one. Null means ask: a guess between two files is never made.
 */
export function openDocumentForRef(ref: SourceRef, documents: readonly OpenSource[]): string | null {
  const kernel = ref.kernel === undefined ? undefined : kernelNameOf(ref.kernel);
  const defines = (d: OpenSource) => kernel !== undefined && d.kernels.includes(kernel);
  // A file that compiled and defines other kernels only is not the one a finding in this kernel names.
  const fits = documents.filter((d) => kernel === undefined || d.kernels.length === 0 || defines(d));
  const tails = fits.map((d) => ({ d, tail: Math.max(sharedTail(d.path ?? d.name, ref.file), basenameOf(ref.file) === d.name ? 1 : 0) }));
  const best = Math.max(0, ...tails.map((t) => t.tail));
  let named = best > 0 ? tails.filter((t) => t.tail === best).map((t) => t.d) : [];
  if (named.some(defines)) named = named.filter(defines);
  if (named.length === 1) return named[0]!.id;
  if (kernel === undefined) return null;
  // The name says nothing (another machine's file, or two of that name): the one file that defines the kernel.
  const defining = (named.length > 1 ? named : fits).filter(defines);
  return defining.length === 1 ? defining[0]!.id : null;
}

/** A gallery sample (one variant) as a recorded result's own sample is looked for among them. */
export interface SampleCandidate {
  /** The sample's folder name ("oob-off-by-one"). */
  name: string;
  plan: unknown;
  planPath: string;
  /** Its kernels' files (both variants': the result names the one that ran). */
  sourcePaths: string[];
}

/**
 * A recorded result's own sample: among those whose plan ran the steps the result recorded (planMatchesOutcome,
 * given as `matches`), the one named like the result file ("oob-off-by-one.json"), else the only one. Null when
 * no plan fits, or several do and the name does not tell them apart.
 */
export function resultSample<S extends SampleCandidate>(resultPath: string, samples: readonly S[], matches: (plan: unknown) => boolean): S | null {
  const fitting = samples.filter((s) => matches(s.plan));
  const stem = basenameOf(resultPath).replace(/\.[^.]*$/, '');
  const named = fitting.filter((s) => s.name === stem || stem.startsWith(`${s.name}-`) || stem.startsWith(`${s.name}.`));
  if (named.length === 1) return named[0]!;
  return fitting.length === 1 ? fitting[0]! : null;
}

/**
 * The source context of a recorded result: a file beside it first (a copy saved with it is the one meant), then its
 * own sample's (or plan's) folders — never another sample's file of the same name.
 */
export function resultSources(resultPath: string, own: Pick<SampleCandidate, 'planPath' | 'sourcePaths'> | null): SourceContext {
  const folders = [dirnameOf(resultPath), ...(own ? [...own.sourcePaths.map(dirnameOf), dirnameOf(own.planPath)] : [])];
  return { documents: {}, paths: [], folders: [...new Set(folders)] };
}
