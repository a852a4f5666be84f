import { lookupCode } from '../../core/cuda/error-catalog';
import { formatDim3 } from '../../core/dims';
import { formatBytes, formatMs } from '../../core/format';
import type { RunOutcome } from '../services/run-service';

const fmt = (n: number | null) => (n === null ? '—' : Number.isInteger(n) ? String(n) : n.toPrecision(6).replace(/\.?0+$/, ''));

/** The human-readable report of a run, for the terminal. */
export function renderRun(outcome: RunOutcome): string {
  const lines: string[] = [];
  const r = outcome.result;
  if (r) lines.push(`Device ${r.device.ordinal}: ${r.device.name}   (runner pid ${r.runnerPid})`);
  for (const c of outcome.compile) {
    lines.push(`Compiled ${c.kernel} with ${c.backend} in ${c.ms.toFixed(0)} ms${c.symbol ? ` → ${c.symbol}` : ''}`);
  }
  for (const f of r?.functions ?? []) {
    const a = f.attributes;
    lines.push(
      `  ${f.entry}: ${a.numRegs} registers/thread, ${formatBytes(a.sharedSizeBytes)} static shared, ${formatBytes(a.localSizeBytes)} local/thread, max ${a.maxThreadsPerBlock} threads/block`,
    );
  }
  for (const l of r?.launches ?? []) {
    const stats =
      l.timesMs.length > 1
        ? `median ${formatMs(l.medianMs)} (min ${formatMs(l.minMs)}, max ${formatMs(l.maxMs)}, ${l.timesMs.length} runs)`
        : formatMs(l.medianMs);
    lines.push(`Launch ${l.entry}<<<${formatDim3(l.grid)}, ${formatDim3(l.block)}${l.sharedBytes ? `, ${l.sharedBytes}` : ''}>>>: ${stats}`);
  }
  for (const b of r?.buffers ?? []) {
    lines.push(`Buffer ${b.name}: ${b.type}[${b.count}]  min ${fmt(b.min)}  max ${fmt(b.max)}  mean ${fmt(b.mean)}  NaN ${b.nanCount}  Inf ${b.infCount}`);
    lines.push(`  [${b.head.map(fmt).join(', ')}${b.tail.length ? ', …, ' + b.tail.map(fmt).join(', ') : ''}]`);
  }
  for (const leak of r?.leaks ?? []) lines.push(`Leak: buffer ${leak.name} (${formatBytes(leak.bytes)}) was never freed by the plan`);
  if (r?.failure) {
    const f = r.failure;
    const step = f.stepIndex === null ? 'while loading the module' : `at step ${f.stepIndex + 1} (${r.steps[f.stepIndex]?.label ?? f.op})`;
    lines.push('');
    lines.push(`✗ ${f.error.name} (${f.error.code}) ${step}, reported by ${f.error.api}`);
    lines.push(`  ${f.error.message}`);
    const entry = lookupCode(f.error.code);
    if (entry && f.error.library === 'cuda') {
      lines.push(`  ${entry.doc}`);
      if (entry.runtimeName) lines.push(`  (The runtime API calls this ${entry.runtimeName}.)`);
    }
    if (f.op === 'launch') lines.push('  Each launch is followed by a synchronisation (as CUDA_LAUNCH_BLOCKING=1 would), so the error belongs to this step.');
    if (f.sticky) lines.push('  This error is sticky: the CUDA context is dead. The workbench discarded that runner and a fresh one is ready.');
  } else if (outcome.problem) {
    lines.push('');
    lines.push(`✗ ${outcome.problem.title}`);
    lines.push(...outcome.problem.detail.split('\n').map((l) => `  ${l}`));
    lines.push(`  What to do: ${outcome.problem.remedy}`);
    for (const s of outcome.problem.searched ?? []) lines.push(`    searched ${s}`);
  } else if (outcome.status === 'ok') {
    lines.push('✓ Run completed without a CUDA error.');
  }
  return lines.join('\n');
}
