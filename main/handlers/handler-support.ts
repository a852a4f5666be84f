import { join } from 'node:path';
import { readdir } from 'node:fs/promises';

import { ApiError, type CallContext, type ChannelEvent, type ChannelName, type ChannelRequest, type ChannelResponse } from '../../core/api/channels';
import { BundleInputError, type BundleRequest } from '../bundle/bundle-service';
import { samplesDuring } from '../../core/memory/run-timeline';
import { HeldGoneError, type HeldResults } from '../services/held-results';
import type { SampleSeries } from '../../core/memory/samples';
import { BundleRefusedError } from '../bundle/read-bundle';
import { BundleCancelledError, BundleWriteError } from '../bundle/write-bundle';
import { projectRoot } from '../paths';
import { PlanFileError } from '../services/plan-files';

/** One channel's handler on the host: the validated request, its context (Cancel, events), the answer. */
export type Handler<C extends ChannelName> = (request: ChannelRequest<C>, context: CallContext<ChannelEvent<C>>) => Promise<ChannelResponse<C>>;
/** A feature's channels and their handlers: the host's table is made of these (main/host-api.ts). */
export type HandlerGroup<C extends ChannelName> = { [K in C]: Handler<K> };

/**
 * What a bundle request from the UI asks for, as the bundle service takes it: the outcome, the sanitizer report, the
 * samples and the profile the host holds under the ids named (an id it no longer holds: HeldGoneError, in words).
 */
export function bundleRequest(r: ChannelRequest<'bundle.preview'>, held: HeldResults): BundleRequest {
  const doing = 'export the bundle';
  const outcome = held.outcome(r.outcomeId, doing);
  const monitor = r.samplesId ? heldSamples(held, r.samplesId, doing) : null;
  return {
    plan: r.plan,
    outcome,
    origin: r.origin,
    sanitizer: r.sanitizerId ? held.report(r.sanitizerId, doing) : null,
    // A monitoring session's samples go in when they cover the run, as the Memory tab draws it.
    samples: monitor && outcome.result ? samplesDuring(monitor, outcome.result) : null,
    profile: r.profileId ? held.profile(r.profileId, doing) : null,
    includeSources: r.includeSources ?? true,
    redact: r.redact ?? true,
    recordedHere: r.recordedHere ?? false,
  };
}

/**
 * The monitoring session's samples the renderer names because the run took none of its own: nobody chose them, so a
 * session the host no longer holds leaves them out (the preview's list shows what goes in) instead of refusing the bundle.
 */
function heldSamples(held: HeldResults, id: string, doing: string): SampleSeries | null {
  try {
    return held.samples(id, doing);
  } catch (error) {
    if (error instanceof HeldGoneError) return null;
    throw error;
  }
}

/** A bundle's problems reach the user as their message, with a code the UI can tell apart. */
export async function userBundle<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof BundleRefusedError) throw new ApiError(error.message, 'BUNDLE_REFUSED');
    if (error instanceof BundleInputError) throw new ApiError(error.message, 'BUNDLE_INPUT');
    if (error instanceof BundleWriteError) throw new ApiError(error.message, 'BUNDLE_WRITE');
    if (error instanceof BundleCancelledError) throw new ApiError(error.message, 'CANCELLED');
    throw error;
  }
}

/** File problems reach the user as their message, not as an internal error. */
export async function userFile<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof PlanFileError) throw new ApiError(error.message, 'FILE');
    const e = error as NodeJS.ErrnoException;
    if (e.code) throw new ApiError(`${e.message}`, e.code);
    throw error;
  }
}

/** The samples' sources, for the editor's Open sample list. */
export async function listSamples(): Promise<{ name: string; path: string }[]> {
  const root = join(projectRoot(), 'samples');
  const folders = await readdir(root, { withFileTypes: true }).catch(() => []);
  const out: { name: string; path: string }[] = [];
  for (const folder of folders.filter((f) => f.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const files = await readdir(join(root, folder.name)).catch(() => [] as string[]);
    for (const f of files.filter((f) => f.endsWith('.cu')).sort()) out.push({ name: `${folder.name}/${f}`, path: join(root, folder.name, f) });
  }
  return out;
}

/** A plan as a refusal names it: its file, else its kernels. */
export function planInWords(plan: unknown, planPath: string | null): string {
  if (planPath) return `the plan ${planPath}`;
  const kernels = (plan as { kernels?: unknown } | null)?.kernels;
  const entries = Array.isArray(kernels)
    ? kernels.flatMap((k) => (typeof (k as { entry?: unknown })?.entry === 'string' ? [(k as { entry: string }).entry.slice(0, 64)] : [])).slice(0, 4)
    : [];
  return entries.length ? `a plan (kernel ${entries.join(', ')})` : 'a plan';
}
