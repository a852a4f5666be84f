import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { parseMetricRows, type RawKernel } from '../../core/kernel-profile/ncu-csv';
import { firstRunnable, toolCandidates } from '../../main/tools/find-tool';
import { locateNcu } from '../../main/tools/nsight-compute';
import { projectRoot } from '../../main/paths';

/**
 * The bare reference a profile is checked and timed against: the same kernel and launch from a plain program
 * (bench/raw/profile_ref.cu, built here with nvcc), profiled by bare `ncu`. GPU machine only.
 */
export const REFERENCE_METRICS = [
  'l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum',
  'l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum',
  'l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum',
  'l1tex__t_requests_pipe_lsu_mem_global_op_st.sum',
  'dram__bytes.sum.per_second',
  'gpu__time_duration.sum',
];

export interface Reference {
  binary: string;
  args: string[];
}

const dir = mkdtempSync(join(tmpdir(), 'gpu-workbench-profile-ref-'));

export function requireNcu(): string {
  const { path, searched } = locateNcu();
  if (!path) throw new Error(`ncu was not found (looked in ${searched.join(', ')})`);
  return path;
}

/** The naive or tiled transpose (samples/uncoalesced-access) or the streaming vecAdd, as a plain program. */
export function buildReference(kind: 'broken' | 'fixed' | 'stream', streamElements = 1 << 26): Reference {
  const nvcc = firstRunnable(toolCandidates('nvcc', 'GPU_WORKBENCH_NVCC'));
  if (!nvcc) throw new Error('nvcc was not found');
  const source = kind === 'stream' ? 'samples/vector-add/vector_add.cu' : `samples/uncoalesced-access/${kind}.cu`;
  const binary = join(dir, `ref-${kind}`);
  execFileSync(nvcc, [
    '-O3',
    '-lineinfo',
    '-arch=native',
    `-DKERNEL_SOURCE="${join(projectRoot(), source)}"`,
    kind === 'stream' ? '-DVECADD' : '-DTRANSPOSE',
    '-o',
    binary,
    join(projectRoot(), 'bench/raw/profile_ref.cu'),
  ]);
  const args =
    kind === 'stream'
      ? [String(streamElements), '0', String(Math.ceil(streamElements / 256)), '1', '256', '1', '1']
      : ['2048', '2048', '64', kind === 'broken' ? '256' : '64', '32', '8', '1'];
  return { binary, args };
}

/** Bare ncu's metric rows for the reference's one launch. */
export function bareNcuMetrics(ref: Reference, metrics = REFERENCE_METRICS): RawKernel {
  const csv = execFileSync(requireNcu(), ['--metrics', metrics.join(','), '--csv', ref.binary, ...ref.args], { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const kernel = parseMetricRows(csv)[0];
  if (!kernel) throw new Error(`bare ncu profiled no kernel:\n${csv.slice(-2000)}`);
  return kernel;
}
