import { ancestorsOf, EXITED_GRACE_US, isGone, relationOf } from '../../core/memory/process-flags';
import type { GpuProcessFact, ProcessFacts } from '../../core/doctor/facts';
import { ProcReader } from '../memory/proc-reader';
import type { NvmlSnapshotRaw } from '../native/addon';

/**
 * What this system's process table says about each process NVML lists, read with the memory monitor's
 * /proc reader (main/memory/proc-reader.ts) and decided on by its rule. A one-shot doctor has no timeline, so
 * a process seen gone gets a second look: NVML is asked again EXITED_GRACE_US later, and only one it still
 * lists then counts as holding memory after its exit (a context being torn down is listed for a moment).
 */

type Listed = { device: number; pid: number; usedBytes: number | null; name: string };

const listedIn = (snapshot: NvmlSnapshotRaw): Listed[] =>
  snapshot.devices.flatMap((d) => (d.processes ?? []).map((p) => ({ ...p, device: d.index }))).slice(0, 4096);

/** One listed process as /proc shows it now (relation, owner and command only for a live one). */
export async function lookUpProcess(entry: Listed, proc: ProcReader, hostPid = process.pid): Promise<GpuProcessFact> {
  const stat = proc.stat(entry.pid);
  const alive = !isGone(stat);
  const command = alive ? await proc.cmdline(entry.pid) : null;
  const ownUid = typeof process.getuid === 'function' ? process.getuid() : null;
  const uid = alive ? proc.uid(entry.pid) : null;
  return {
    device: entry.device,
    pid: entry.pid,
    usedBytes: entry.usedBytes,
    nvmlName: entry.name.slice(0, 256),
    liveness: alive ? 'alive' : stat ? 'zombie' : 'absent',
    relation: alive ? relationOf(entry.pid, ancestorsOf(entry.pid, proc.parentOf), command, { targetPid: null, hostPid }) : null,
    listedAfterGoneUs: 0,
    ppid: alive ? (stat?.ppid ?? null) : null,
    parent: !alive && stat ? { pid: stat.ppid, command: (await proc.cmdline(stat.ppid)) ?? `[${proc.stat(stat.ppid)?.comm ?? '?'}]` } : null,
    owner: uid === null ? null : { name: proc.userName(uid) ?? `uid ${uid}`, mine: ownUid !== null && uid === ownUid },
    command,
  };
}

/** The process facts of an NVML snapshot; `again` takes another one (for the second look at processes seen gone). */
export async function processFacts(
  first: NvmlSnapshotRaw,
  again: () => Promise<NvmlSnapshotRaw>,
  proc: ProcReader = new ProcReader(),
  graceMs = EXITED_GRACE_US / 1000,
): Promise<ProcessFacts> {
  const firstAt = performance.now();
  let processes = await Promise.all(listedIn(first).map((p) => lookUpProcess(p, proc)));
  let snapshot = first;
  if (processes.some((p) => p.liveness !== 'alive')) {
    await new Promise((resolve) => setTimeout(resolve, graceMs));
    snapshot = await again();
    const elapsedUs = Math.round((performance.now() - firstAt) * 1000);
    const still = new Set(listedIn(snapshot).map((p) => `${p.device}:${p.pid}`));
    // Those NVML let go of were being torn down; those it still lists have held memory past their exit.
    processes = processes
      .filter((p) => p.liveness === 'alive' || still.has(`${p.device}:${p.pid}`))
      .map((p) => (p.liveness === 'alive' ? p : { ...p, listedAfterGoneUs: elapsedUs }));
  }
  return {
    namespace: proc.namespace,
    devices: snapshot.devices.map((d) => ({
      index: d.index,
      totalBytes: d.memory.totalBytes,
      usedBytes: d.memory.usedBytes,
      processesListed: d.processes !== null,
    })),
    processes,
  };
}
