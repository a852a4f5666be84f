/**
 * `gpu-workbench memory <snapshot.pickle> [--json] [--trace out.json]`: what a PyTorch memory snapshot says —
 * the peak and when, the largest allocations alive then with their top user frame, each OOM with the request
 * against what was free, and what was still alive at the end. The pickle is read in a worker thread by the
 * whitelist unpickler; a pickle that asks to run code is refused and nothing in it runs.
 */
import { resolve } from 'node:path';

import type { Command } from 'commander';

import { formatBytes, plural } from '../../core/format';
import { describeFrame, summarize, type Allocation, type DeviceSummary, type FrameGroup } from '../../core/memory/snapshot-model';
import { importSnapshot, SnapshotImportError } from '../memory/snapshot-client';
import { SNAPSHOT_MAX_BYTES } from '../memory/snapshot-protocol';
import { TraceTooLargeError, writeChromeTrace } from '../memory/write-trace';
import { EXIT } from './exit-codes';

/** Lists in --json are bounded: the largest entries, and the groups carry the totals. */
const JSON_LIST = 100;
const SHOWN = 10;

const since = (us: number, start: number | null) => {
  const ms = (us - (start ?? us)) / 1000;
  return ms < 1000 ? `+${ms.toFixed(3)} ms` : `+${(ms / 1000).toFixed(3)} s`;
};

function renderGroups(groups: FrameGroup[], indent: string): string[] {
  const lines = groups
    .slice(0, SHOWN)
    .map(
      (g) =>
        `${indent}${formatBytes(g.bytes).padStart(10)}  ${String(g.count).padStart(6)} × up to ${formatBytes(g.largest).padEnd(9)} ${describeFrame(g.frame)}`,
    );
  if (groups.length > SHOWN) lines.push(`${indent}… and ${groups.length - SHOWN} more frames`);
  return lines;
}

function renderAllocations(list: Allocation[], start: number | null, indent: string): string[] {
  return list.map(
    (a) =>
      `${indent}${formatBytes(a.size).padStart(10)}  0x${a.address.toString(16)}  ${a.timeUs === null ? 'before the recording' : `allocated ${since(a.timeUs, start)}`}  ${describeFrame(a.userFrame)}`,
  );
}

export function renderMemorySummary(file: string, devices: DeviceSummary[]): string {
  const out: string[] = [`Snapshot ${file}`];
  if (!devices.length) out.push('  It holds no trace and no segments (was _record_memory_history on when it was dumped?).');
  for (const d of devices) {
    const start = d.startUs;
    const span = d.endUs !== null && start !== null ? ` over ${since(d.endUs, start).slice(1)}` : '';
    out.push(``, `cuda:${d.device} — ${d.entries} trace entries${span}`);
    const p = d.peak;
    out.push(
      `  Peak: ${formatBytes(p.bytes)} allocated (${formatBytes(p.reserved)} reserved) ${p.timeUs === null ? 'before the recording began' : `at ${since(p.timeUs, start)} (entry ${p.index + 1})`}, ${plural(p.allocations, 'allocation')} alive`,
    );
    if (p.largest.length) out.push(`  Largest allocations alive at the peak:`, ...renderAllocations(p.largest, start, '    '));
    if (p.groups.length) out.push(`  At the peak, by top user frame:`, ...renderGroups(p.groups, '    '));
    for (const o of d.ooms) {
      const free = Number.isFinite(o.deviceFree) ? formatBytes(o.deviceFree) : 'an unknown amount';
      const ratio =
        Number.isFinite(o.deviceFree) && o.deviceFree > 0
          ? ` (${(o.request / o.deviceFree).toFixed(o.request / o.deviceFree < 10 ? 2 : 0)}× what was free)`
          : '';
      out.push(
        `  OOM at ${since(o.timeUs, start)}: asked for ${formatBytes(o.request)} with ${free} free on the device${ratio}; PyTorch held ${formatBytes(o.allocated)} allocated, ${formatBytes(o.reserved)} reserved (${formatBytes(o.cachedFree)} cached and unused) — requested at ${describeFrame(o.userFrame)}`,
      );
      if (o.holders.length) out.push(`    What held memory then, by top user frame:`, ...renderGroups(o.holders, '      '));
    }
    const e = d.atEnd;
    const made = e.allocations.reduce((s, a) => s + a.size, 0);
    out.push(
      `  Alive at the end (leak candidates): ${plural(e.allocations.length, 'allocation')} made during the recording, ${formatBytes(made)}; ${formatBytes(e.allocated)} allocated, ${formatBytes(e.reserved)} reserved in all`,
    );
    out.push(...renderGroups(e.groups, '    '));
    if (d.beforeRecording.allocations.length) {
      out.push(
        `  Also alive, allocated before the recording began: ${plural(d.beforeRecording.allocations.length, 'block')}, ${formatBytes(d.beforeRecording.bytes)}`,
        ...renderGroups(d.beforeRecording.groups, '    '),
      );
    }
    out.push(
      `  Segments: ${d.segments.count}, ${formatBytes(d.segments.reserved)} reserved; largest free gap inside them ${formatBytes(d.segments.largestGap)}`,
    );
  }
  return out.join('\n');
}

const bounded = (d: DeviceSummary) => {
  const largest = (list: Allocation[]) => [...list].sort((x, y) => y.size - x.size).slice(0, JSON_LIST);
  return {
    ...d,
    atEnd: { ...d.atEnd, count: d.atEnd.allocations.length, allocations: largest(d.atEnd.allocations) },
    beforeRecording: { ...d.beforeRecording, count: d.beforeRecording.allocations.length, allocations: largest(d.beforeRecording.allocations) },
  };
};

export function registerMemoryCommand(program: Command): void {
  program
    .command('memory')
    .description(
      `Read a PyTorch memory snapshot (torch.cuda.memory._dump_snapshot): the peak, what was alive then, OOMs, leaks. Nothing in the pickle runs; files over ${formatBytes(SNAPSHOT_MAX_BYTES)} are refused. Exit 64 when the file is refused.`,
    )
    .argument('<snapshot>', 'the .pickle file')
    .option('--json', 'machine-readable output')
    .option('--trace <file>', 'also write a Chrome Trace Event JSON file (opens in Perfetto and chrome://tracing)')
    .action(async (file: string, opts: { json?: boolean; trace?: string }) => {
      const path = resolve(file);
      let imported;
      try {
        imported = await importSnapshot(path);
      } catch (error) {
        if (!(error instanceof SnapshotImportError)) throw error;
        console.error(error.kind === 'refused' ? `✗ ${path} was refused: ${error.message}` : `✗ ${error.message}`);
        process.exitCode = error.kind === 'out-of-memory' || error.kind === 'crashed' ? EXIT.failed : EXIT.usage;
        return;
      }
      const summary = summarize(imported.model);
      let trace: { path: string; bytes: number; events: number } | { path: string; refused: string } | null = null;
      if (opts.trace) {
        const tracePath = resolve(opts.trace);
        try {
          trace = { path: tracePath, ...(await writeChromeTrace(imported.model, tracePath, { source: path })) };
        } catch (error) {
          if (!(error instanceof TraceTooLargeError)) throw error;
          trace = { path: tracePath, refused: error.message };
          process.exitCode = EXIT.failed;
        }
      }
      if (opts.json) {
        console.log(
          JSON.stringify(
            { file: path, timings: imported.timings, allocatorSettings: imported.model.allocatorSettings, devices: summary.map(bounded), trace },
            null,
            2,
          ),
        );
      } else {
        console.log(renderMemorySummary(path, summary));
        if (trace && 'refused' in trace) console.error(`✗ No trace written: ${trace.refused}`);
        else if (trace)
          console.log(`\nTrace: ${trace.path} (${formatBytes(trace.bytes)}, ${trace.events} events): open it at https://ui.perfetto.dev or chrome://tracing`);
      }
    });
}
