import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import { parseEnvAssignment } from '../../core/sanitizer/sanitizer-args';
import { deviceInfos } from '../services/device-service';
import { profileProgram, ProgramProfileUnavailableError } from '../services/program-profile-service';
import { UsageError } from './cli-support';
import { EXIT } from './exit-codes';
import { renderProgramProfile } from './render-profile';

export interface ProgramProfileOptions {
  kernel?: string;
  launchCount: number;
  launchSkip: number;
  cwd: string;
  env: string[];
  timeout: number;
  save?: string;
  compare?: string;
  json?: boolean;
  device: number;
}

/** `gpu-workbench profile -- <command>`: a program's first kernel launches under Nsight Compute, in words. */
export async function profileProgramCommand(command: string[], opts: ProgramProfileOptions): Promise<number> {
  if (opts.compare) throw new UsageError('--compare is for one kernel launch (a plan, a sample or a .cu file), not a program.');
  if (opts.kernel) {
    try {
      new RegExp(opts.kernel);
    } catch {
      throw new UsageError(`--kernel with a program is a regular expression for the kernels' names; "${opts.kernel}" is not one.`);
    }
  }
  const env: Record<string, string> = {};
  for (const assignment of opts.env) {
    const parsed = parseEnvAssignment(assignment);
    if (!parsed) throw new UsageError(`--env takes NAME=value (a name of letters, digits and _), not "${assignment}".`);
    env[parsed.name] = parsed.value;
  }
  const devices = await deviceInfos();
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  try {
    const profile = await profileProgram({
      command,
      cwd: resolve(opts.cwd),
      env,
      kernel: opts.kernel ?? null,
      skip: opts.launchSkip,
      count: opts.launchCount,
      timeoutMs: opts.timeout * 1000,
      signal: controller.signal,
      device: devices.ok ? (devices.devices[opts.device] ?? null) : null,
      onOutput: opts.json ? undefined : (text, stream) => (stream === 'stdout' ? process.stdout : process.stderr).write(text),
    });
    if (opts.save) await writeFile(resolve(opts.save), `${JSON.stringify(profile, null, 2)}\n`, { mode: 0o644 });
    if (opts.json) console.log(JSON.stringify(profile, null, 2));
    else console.log(`\n${renderProgramProfile(profile)}${opts.save ? `\nSaved to ${opts.save}` : ''}`);
    return profile.kernels.length ? EXIT.ok : EXIT.failed;
  } catch (error) {
    if (!(error instanceof ProgramProfileUnavailableError)) throw error;
    console.error(`✗ ${error.message}`);
    return EXIT.unavailable;
  } finally {
    process.off('SIGINT', interrupt);
  }
}
