import type { ToolReport } from '../../core/discovery';
import { findTool, toolCandidates } from '../tools/find-tool';

export const nvccCandidates = (env: Record<string, string | undefined> = process.env): string[] => toolCandidates('nvcc', 'GPU_WORKBENCH_NVCC', env);

/** Finds nvcc and asks its version; absent is a report, not an error. */
export function findNvcc(): Promise<ToolReport> {
  return findTool(nvccCandidates(), (stdout) => {
    const release = /release ([\d.]+), (V[\d.]+)/.exec(stdout);
    return release ? `CUDA ${release[1]} (${release[2]})` : (stdout.trim().split('\n').pop() ?? null);
  });
}
