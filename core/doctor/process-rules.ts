import type { CheckStatus, DoctorCheck } from '../discovery';
import { formatBytes, plural } from '../format';
import { flagProcess } from '../memory/process-flags';
import { notRun, whyMissing, worst } from './check-helpers';
import type { DoctorFacts, GpuProcessFact, ProcessFacts } from './facts';

/**
 * Processes holding GPU memory, as NVML lists them. Whether one has exited, cannot be seen from here, or is
 * another program is decided by the memory monitor's rule (core/memory/process-flags.ts, flagProcess), so the
 * doctor and the memory timeline flag a process alike; here each flag becomes a verdict: an exited process
 * still holding memory warns (its memory is lost until whatever holds the GPU lets go), a PID that cannot be
 * looked up leaves the check not run, another program is listed — and warns only when others hold most of
 * the GPU.
 */

const who = (p: GpuProcessFact) => {
  const name = (p.command ?? p.nvmlName).trim().replace(/\s+/g, ' ');
  return `PID ${p.pid}${name ? ` (${name.length > 80 ? `${name.slice(0, 77)}…` : name})` : ''}`;
};
const held = (p: GpuProcessFact) => (p.usedBytes === null ? 'memory not reported' : formatBytes(p.usedBytes));

function judge(facts: ProcessFacts): DoctorCheck {
  const base = { id: 'gpu-processes', area: 'processes' as const, title: 'Processes holding GPU memory' };
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
    const parts: string[] = [];
    let others = 0;
    for (const p of here) {
      const flag = flagProcess({ ...p, namespace: facts.namespace });
      if (flag?.kind === 'exited' || flag?.kind === 'not-visible') {
        statuses.push(flag.kind === 'exited' ? 'warn' : 'not-run');
        remedies.add(flag.fix);
        parts.push(`${who(p)} ${held(p)}, ${flag.kind === 'exited' ? 'EXITED' : 'not visible here'}: ${flag.text.replace(/\.$/, '')}`);
      } else if (flag?.kind === 'foreign') {
        others += p.usedBytes ?? 0;
        const orphan = p.ppid === 1 ? ', its parent is PID 1 (a service, or an orphan left behind by a job whose parent exited)' : '';
        parts.push(`${who(p)} ${held(p)}, another program${p.owner ? ` (${p.owner.mine ? 'yours' : p.owner.name})` : ''}${orphan}`);
      } else {
        // No flag: the workbench's own, or one that exited a moment ago and is being torn down.
        parts.push(`${who(p)} ${held(p)}, ${p.relation === 'workbench' ? 'the workbench' : 'exiting (NVML lets go of it shortly)'}`);
      }
    }
    const notes: string[] = [];
    if (device.totalBytes && others > device.totalBytes / 2) {
      statuses.push('warn');
      notes.push(`Other programs hold ${formatBytes(others)} of its ${formatBytes(device.totalBytes)}: a run here gets less than half the memory.`);
      remedies.add('Wait for them, or use another GPU (CUDA_VISIBLE_DEVICES); nvidia-smi shows what they are.');
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
