import type { ToolReport } from '../../core/discovery';
import { findTool, toolCandidates } from './find-tool';

export const computeSanitizerCandidates = (env: Record<string, string | undefined> = process.env): string[] =>
  toolCandidates('compute-sanitizer', 'GPU_WORKBENCH_COMPUTE_SANITIZER', env);

/** Finds compute-sanitizer ("Version 2025.3.0.0 (build …)") and its version; absent is a report. */
export function findComputeSanitizer(): Promise<ToolReport> {
  return findTool(computeSanitizerCandidates(), (stdout) => /Version ([\d.]+)/.exec(stdout)?.[1] ?? null);
}
