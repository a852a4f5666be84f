import { formatDim3 } from '../../core/dims';
import { formatBytes, formatMs, partOf, plural, thousands } from '../../core/format';
import type { Diagnosis } from '../../core/runner/diagnose';
import type { RunOutcome } from '../services/run-service';

const fmt = (n: number | null) => (n === null ? '—' : Number.isInteger(n) ? String(n) : n.toPrecision(6).replace(/\.?0+$/, ''));

/** The human-readable report of a run, for the terminal: what ran, what came back, then the diagnosis. */
export function renderRun(outcome: RunOutcome): string {
  const lines: string[] = [];
  const r = outcome.result;
  if (r) lines.push(`Device ${r.device.ordinal}: ${r.device.name}   (runner pid ${r.runnerPid})`);
  for (const c of outcome.compile) {
    lines.push(`Compiled ${c.kernel} with ${c.backend}${c.cached ? ' (cached)' : ''} in ${c.ms.toFixed(0)} ms${c.symbol ? ` → ${c.symbol}` : ''}`);
  }
  for (const f of r?.functions ?? []) {
    const a = f.attributes;
    lines.push(
      `  ${f.entry}: ${a.numRegs} registers/thread, ${formatBytes(a.sharedSizeBytes)} static shared, ${formatBytes(a.localSizeBytes)} local/thread, max ${a.maxThreadsPerBlock} threads/block`,
    );
  }
  // In plan order: a launch's line carries its timings where the other steps carry their duration.
  const launches = new Map((r?.launches ?? []).map((l) => [l.stepIndex, l]));
  for (const s of r?.steps ?? []) {
    const l = launches.get(s.index);
    if (!l) {
      lines.push(`Step ${s.index + 1}: ${s.label}${s.ms === null ? '' : `  ${formatMs(s.ms)}`}`);
      continue;
    }
    const stats =
      l.timesMs.length > 1
        ? `median ${formatMs(l.medianMs)} (min ${formatMs(l.minMs)}, max ${formatMs(l.maxMs)}, ${l.timesMs.length} runs)`
        : formatMs(l.medianMs);
    lines.push(
      `Step ${s.index + 1}: launch ${l.entry}<<<${formatDim3(l.grid)}, ${formatDim3(l.block)}${l.sharedBytes ? `, ${l.sharedBytes}` : ''}>>>  ${stats}`,
    );
  }
  for (const b of r?.buffers ?? []) {
    lines.push(
      `Buffer ${b.name}: ${b.type}[${b.count}]  min ${fmt(b.min)}  max ${fmt(b.max)}  mean ${fmt(b.mean)}  NaN ${thousands(b.nanCount)}  Inf ${thousands(b.infCount)}`,
    );
    lines.push(`  [${b.head.map(fmt).join(', ')}${b.tail.length ? ', …, ' + b.tail.map(fmt).join(', ') : ''}]`);
  }
  for (const c of r?.checks.comparisons ?? []) {
    lines.push(
      c.mismatches
        ? `Compare ${c.buffer} with ${c.against}: ${partOf(c.mismatches, c.checked, 'element')} ${c.mismatches === 1 ? 'differs' : 'differ'}; first at [${c.first[0]?.index}]: got ${fmt(c.first[0]?.actual ?? null)}, expected ${fmt(c.first[0]?.expected ?? null)}`
        : `Compare ${c.buffer} with ${c.against}: all ${plural(c.checked, 'element')} match`,
    );
  }
  for (const o of r?.deviceOutput ?? []) {
    lines.push(
      `Device output after step ${o.stepIndex + 1}:`,
      ...o.text
        .replace(/\n$/, '')
        .split('\n')
        .map((l) => `  | ${l}`),
    );
    if (o.droppedBytes) lines.push(`  | … ${formatBytes(o.droppedBytes)} more not kept`);
  }
  const d = r?.checks.determinism;
  if (d?.status === 'compared')
    lines.push(
      d.differences.length
        ? `Determinism: ${plural(d.differences.length, 'read-back')} ${d.differences.length === 1 ? 'differs' : 'differ'} on a second run (${formatMs(d.ms)})`
        : `Determinism: ${d.runs === 1 ? 'a second run' : `${d.runs} more runs`} gave bit-identical read-backs (${formatMs(d.ms)})`,
    );
  else if (d) lines.push(`Determinism: not checked — ${d.reason ?? 'turned off'}`);
  for (const leak of r?.leaks ?? []) lines.push(`Leak: buffer ${leak.name} (${formatBytes(leak.bytes)}) was never freed by the plan`);
  if (r) lines.push(`(runner ${formatMs(r.executeMs)}; host total ${formatMs(outcome.timing.totalMs)})`);
  lines.push('', ...renderDiagnosis(outcome.diagnosis));
  return lines.join('\n');
}

export function renderDiagnosis(d: Diagnosis): string[] {
  const mark = d.severity === 'ok' ? '✓' : d.severity === 'warning' ? '!' : '✗';
  const lines = [`${mark} ${d.headline}`];
  if (d.step) lines.push(`  Step ${d.step.index + 1}: ${d.step.label}`);
  if (d.sourceLocation) lines.push(`  Source: ${d.sourceLocation.file}:${d.sourceLocation.line}`);
  if (d.error) {
    const runtime = d.error.runtimeName && d.error.runtimeName !== d.error.name ? ` — ${d.error.runtimeName} in the runtime API` : '';
    lines.push(`  ${d.error.name} (${d.error.code}) from ${d.error.api}${runtime}`);
    if (d.error.message) lines.push(`  “${d.error.message}”`);
  }
  if (d.explanation) {
    lines.push(`  What it means: ${d.explanation.summary}`);
    if (d.explanation.causes.length) lines.push('  Likely causes:', ...d.explanation.causes.map((c) => `    - ${c}`));
  }
  for (const s of d.specifics) lines.push(`  ${s}`);
  for (const f of d.launchFindings.filter((f) => f.severity !== 'note')) {
    lines.push(`  Validator (${f.rule}): ${f.message}${f.fix ? ` → ${f.fix}` : ''}`);
  }
  if (d.memory?.processes?.length) {
    lines.push(
      '  Processes on this device:',
      ...d.memory.processes.map((p) => `    pid ${p.pid} ${p.name || '?'}: ${p.usedBytes === null ? '?' : formatBytes(p.usedBytes)}`),
    );
  }
  if (d.sanitizer) lines.push(`  To find the line: ${d.sanitizer.command}`, `    (${d.sanitizer.why})`);
  if (d.next.length) lines.push('  What to do:', ...d.next.map((n) => `    - ${n}`));
  return lines;
}
