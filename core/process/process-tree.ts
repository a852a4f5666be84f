/**
 * A process's descendants in a snapshot of the process table (pid → parent pid, as /proc/PID/stat says): what the
 * workbench counts as its own where a pool knows only the pid it started — under compute-sanitizer that is the
 * tool's, and the runner holding the CUDA context is the tool's child.
 */

/** Most descendants returned: far more than a host starts (runners, spares, compile workers, tools and theirs). */
export const MAX_DESCENDANTS = 1024;

export interface ProcessLink {
  pid: number;
  ppid: number;
}

/**
 * Every descendant of `roots` (the roots themselves left out), generation by generation, each once, at most `max`.
 * A table is a snapshot taken one file at a time, so it may hold a loop (a pid reused between two reads): a pid is
 * visited once, and the walk ends.
 */
export function descendantsOf(roots: readonly number[], table: readonly ProcessLink[], max = MAX_DESCENDANTS): number[] {
  const children = new Map<number, number[]>();
  for (const { pid, ppid } of table) {
    if (!Number.isInteger(pid) || pid <= 0 || pid === ppid) continue;
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  const seen = new Set(roots);
  const out: number[] = [];
  let generation = [...seen];
  while (generation.length && out.length < max) {
    const next: number[] = [];
    for (const parent of generation) {
      for (const child of children.get(parent) ?? []) {
        if (seen.has(child)) continue;
        seen.add(child);
        out.push(child);
        next.push(child);
        if (out.length >= max) return out;
      }
    }
    generation = next;
  }
  return out;
}
