import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import { compareProfiles } from '../../core/kernel-profile/profile-compare';
import type { Profile } from '../../core/kernel-profile/profile';
import { runReader, ReaderError } from '../readers/reader-process';
import { deviceInfos } from '../services/device-service';
import { profilePlan } from '../services/kernel-profile-service';
import { createWorkbench } from '../workbench';
import { forkLauncher } from '../process/launcher';
import { EXIT } from './exit-codes';
import { renderComparison, renderProfile } from './render-profile';
import { renderRun } from './render-run';

export interface ProfileCommandOptions {
  step?: number;
  counters: boolean;
  save?: string;
  compare?: string;
  timeout: number;
  json?: boolean;
  device: number;
  arch?: string;
}

/** A saved profile, read in a reader process (it is a file from outside). */
export async function readSavedProfile(path: string): Promise<Profile> {
  return (await runReader<Profile>({ kind: 'profile', path: resolve(path), maxBytes: 64 * 2 ** 20 }, path)).value;
}

/** `gpu-workbench profile`: the plan's launch under Nsight Compute, what its numbers mean, and a comparison with a saved profile. */
export async function profileCommand(plan: unknown, planPath: string | null, opts: ProfileCommandOptions): Promise<number> {
  let before: Profile | null = null;
  if (opts.compare) {
    try {
      before = await readSavedProfile(opts.compare);
    } catch (error) {
      if (!(error instanceof ReaderError)) throw error;
      console.error(`✗ ${error.message}`);
      return EXIT.usage;
    }
  }
  const devices = await deviceInfos();
  const device = devices.ok ? (devices.devices[opts.device] ?? null) : null;
  const workbench = createWorkbench(forkLauncher, { warmSpare: false });
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  try {
    const { outcome, profile } = await profilePlan(
      {
        plan,
        planPath,
        step: opts.step === undefined ? null : opts.step - 1,
        arch: opts.arch,
        timeoutMs: opts.timeout * 1000,
        signal: controller.signal,
        device,
        noCounters: !opts.counters,
      },
      workbench,
    );
    if (profile && opts.save) await writeFile(resolve(opts.save), `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o644 });
    const comparison = profile && before ? compareProfiles(before, profile) : null;
    if (opts.json) console.log(JSON.stringify({ profile, comparison, run: outcome }, null, 2));
    else if (profile)
      console.log(
        [renderProfile(profile), ...(comparison ? ['', renderComparison(comparison)] : []), ...(opts.save ? [`Saved to ${opts.save}`] : [])].join('\n'),
      );
    else console.log(`${renderRun(outcome)}\n\n✗ Not profiled: the plan did not run to the end (above).`);
    if (!profile) return outcome.status === 'unavailable' ? EXIT.unavailable : outcome.status === 'invalid' ? EXIT.usage : EXIT.failed;
    return EXIT.ok;
  } finally {
    process.off('SIGINT', interrupt);
    await workbench.dispose();
  }
}
