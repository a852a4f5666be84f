import type { CheckStatus, DoctorCheck } from '../discovery';
import { formatBytes } from '../format';
import type { ProcessFlagKind } from '../memory/samples';
import { notRun, plural, whyMissing, worst } from './check-helpers';
import type { DoctorFacts, GpuProcessFact, ProcessFacts } from './facts';

/**
 * Processes holding GPU memory, as NVML lists them, each looked up in this system's process table. The flag
 * vocabulary is the memory timeline's (core/memory/samples.ts), and this is the one rule that assigns it.
 */

export interface ProcessVisibility {
  /** This process runs in a nested PID namespace (a container): NVML's PIDs are the host's. */
  pidNamespaceNested: boolean | null;
  /** /proc hides other users' processes (hidepid): a missing PID proves nothing. */
  procHidesOthers: boolean | null;
}

/** Why a process holding GPU memory deserves a look, or null when it is the workbench's own. */
export function processFlagKind(p: Pick<GpuProcessFact, 'inProcTable' | 'state' | 'startedByWorkbench'>, seen: ProcessVisibility): ProcessFlagKind | null {
  // In a container NVML's PID is the host's: the same number here is some other process, or none.
  if (seen.pidNamespaceNested || p.inProcTable === null) return 'not-visible';
  if (!p.inProcTable) return seen.procHidesOthers ? 'not-visible' : 'exited';
  // A zombie has exited; its entry waits for its parent to collect it, and the driver may still hold its memory.
  if (p.state === 'Z' || p.state === 'X') return 'exited';
  return p.startedByWorkbench ? null : 'foreign';
}

/** What each flag means and what to do, for one process (the same words in the doctor and the timeline). */
export function describeProcessFlag(kind: ProcessFlagKind, p: Pick<GpuProcessFact, 'pid' | 'ppid' | 'state' | 'device'>): { text: string; fix: string } {
  switch (kind) {
    case 'exited':
      return p.state === 'Z'
        ? {
            text: `PID ${p.pid} has exited but its parent${p.ppid ? ` (PID ${p.ppid})` : ''} has not collected it (a zombie), and the driver still counts its memory.`,
            fix: `End or fix the parent${p.ppid ? ` (kill ${p.ppid}, if it is yours and stuck)` : ''}; the memory returns when the zombie is collected.`,
          }
        : {
            text: `PID ${p.pid} is not in this system's process table, yet NVML still counts its memory: its context outlived it.`,
            fix: `If it is still listed in a minute (the driver may just be cleaning up), the memory returns only with a GPU reset (sudo nvidia-smi -i ${p.device} -r, nothing else on the GPU) or a reboot.`,
          };
    case 'not-visible':
      return {
        text: `PID ${p.pid} cannot be looked up from here (another PID namespace: this process runs in a container, or /proc hides other users' processes).`,
        fix: 'Run nvidia-smi on the host to see which process it is.',
      };
    case 'foreign':
      return {
        text: `PID ${p.pid} is another program, not started by the workbench.`,
        fix: 'Nothing, if it is meant to run; it shares the GPU and its memory.',
      };
  }
}

const who = (p: GpuProcessFact) => {
  const name = (p.command ?? p.nvmlName).trim().replace(/\s+/g, ' ');
  return `PID ${p.pid}${name ? ` (${name.length > 80 ? `${name.slice(0, 77)}…` : name})` : ''}`;
};
const held = (p: GpuProcessFact) => (p.usedBytes === null ? 'memory not reported' : formatBytes(p.usedBytes));

function judge(facts: ProcessFacts): DoctorCheck {
  const base = { id: 'gpu-processes', area: 'processes' as const, title: 'Processes holding GPU memory' };
  const seen = { pidNamespaceNested: facts.pidNamespaceNested, procHidesOthers: facts.procHidesOthers };
  const lines: string[] = [];
  const statuses: CheckStatus[] = [];
  const remedies = new Set<string>();
  for (const device of facts.devices) {
    const here = facts.processes.filter((p) => p.device === device.index);
    if (!device.processesListed) {
      statuses.push('not-run');
      lines.push(`GPU ${device.index}: NVML could not list its processes (${formatBytes(device.usedBytes)} in use).`);
      continue;
    }
    if (!here.length) {
      lines.push(`GPU ${device.index}: no process holds memory on it.`);
      continue;
    }
    const flagged = here.map((p) => ({ p, kind: processFlagKind(p, seen) }));
    const parts: string[] = [];
    const notes: string[] = [];
    for (const { p, kind } of flagged) {
      const orphan = kind === 'foreign' && p.ppid === 1 ? ', its parent is PID 1 (a service, or left behind by a job whose parent exited)' : '';
      if (kind === 'exited') {
        const { text, fix } = describeProcessFlag(kind, p);
        statuses.push('warn');
        remedies.add(fix);
        parts.push(`${who(p)} ${held(p)}, EXITED: ${text.replace(/\.$/, '')}`);
      } else {
        const label = kind === null ? 'the workbench' : kind === 'foreign' ? `another program${orphan}` : 'cannot be looked up here';
        parts.push(`${who(p)} ${held(p)}, ${label}`);
      }
      if (kind === 'not-visible') statuses.push('not-run');
    }
    const others = flagged.filter((x) => x.kind === 'foreign').reduce((sum, x) => sum + (x.p.usedBytes ?? 0), 0);
    if (device.totalBytes && others > device.totalBytes / 2) {
      statuses.push('warn');
      notes.push(`Other programs hold ${formatBytes(others)} of its ${formatBytes(device.totalBytes)}: a run here gets less than half the memory.`);
      remedies.add('Wait for them, or use another GPU (CUDA_VISIBLE_DEVICES); nvidia-smi shows what they are.');
    }
    const hidden = flagged.find((x) => x.kind === 'not-visible');
    if (hidden) {
      notes.push(describeProcessFlag('not-visible', hidden.p).text.replace(/^PID \d+ cannot/, 'Their PIDs cannot'));
      remedies.add('Run nvidia-smi on the host to see which processes they are.');
    }
    lines.push(`GPU ${device.index}: ${plural(here.length, 'process', 'processes')} — ${parts.join('; ')}.${notes.length ? ` ${notes.join(' ')}` : ''}`);
  }
  if (!facts.devices.length) return notRun(base.id, base.area, base.title, 'NVML lists no GPU.');
  const status = worst(statuses);
  return { ...base, status, detail: lines.join(' '), remedy: status === 'ok' || !remedies.size ? null : [...remedies].join(' ') };
}

export function processChecks(facts: DoctorFacts): DoctorCheck[] {
  const c = facts.processes;
  if (c.status !== 'ok') return [notRun('gpu-processes', 'processes', 'Processes holding GPU memory', whyMissing(c)!)];
  return [judge(c.value)];
}
