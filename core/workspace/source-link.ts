import { basenameOf, isAbsolutePath, joinPath } from './paths';

/** A place in a source file that a result, a diagnostic or a finding names. */
export interface SourceRef {
  /** As the compiler or the run wrote it: a name ("broken.cu") or a path. */
  file: string;
  line: number;
  column?: number;
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
