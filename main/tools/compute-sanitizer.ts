import type { ToolReport } from '../../core/discovery';
import { findTool, firstRunnable, toolCandidates, toolVersion } from './find-tool';
import { rememberedToolVersion } from './remembered-version';

export const computeSanitizerCandidates = (env: Record<string, string | undefined> = process.env): string[] =>
  toolCandidates('compute-sanitizer', 'GPU_WORKBENCH_COMPUTE_SANITIZER', env);

/** Finds compute-sanitizer ("Version 2025.3.0.0 (build …)") and its version; absent is a report. */
export function findComputeSanitizer(): Promise<ToolReport> {
  return findTool(computeSanitizerCandidates(), (stdout) => versionOf(stdout));
}

const versionOf = (stdout: string) => /Version ([\d.]+)/.exec(stdout)?.[1] ?? null;

/** Where compute-sanitizer is, without running it (its --version takes a while; a run asks it alongside). */
export function locateComputeSanitizer(): { path: string | null; searched: string[] } {
  const searched = computeSanitizerCandidates();
  return { path: firstRunnable(searched), searched };
}

const versions = new Map<string, Promise<string | null>>();
/**
 * Its version, asked once per path for the life of the process (a diagnosis runs the tool several times), and
 * remembered on disk for the next process (remembered-version.ts).
 */
export function computeSanitizerVersion(path: string): Promise<string | null> {
  let version = versions.get(path);
  if (!version) versions.set(path, (version = rememberedToolVersion(path, () => toolVersion(path, versionOf))));
  return version;
}
