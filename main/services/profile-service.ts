import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { ApiError } from '../../core/api/channels';
import { describeIssues } from '../../core/plan/plan-schema';
import { deviceProfileSchema, makeProfile, type DeviceProfile } from '../../core/validate/device-limits';
import { projectRoot } from '../paths';
import { listDevices } from './device-service';
import { readRegularFile } from './safe-fs';

export interface ProfileEntry {
  id: string;
  label: string;
  source: 'device' | 'shipped' | 'user';
  profile: DeviceProfile;
}

export const userProfileDir = (): string =>
  process.env['GPU_WORKBENCH_PROFILE_DIR'] ?? join(process.env['XDG_CONFIG_HOME'] ?? join(homedir(), '.config'), 'gpu-workbench', 'profiles');

/** A device profile is a few KiB of JSON (the shipped ones are 6 KiB). */
const MAX_PROFILE_BYTES = 1024 * 1024;

export async function loadProfileFile(path: string): Promise<DeviceProfile> {
  let json: unknown;
  try {
    json = JSON.parse((await readRegularFile(path, MAX_PROFILE_BYTES)).bytes.toString('utf8'));
  } catch (error) {
    throw new ApiError(
      `Cannot read the device profile ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it does not exist' : (error as Error).message}.`,
      'BAD_PROFILE',
    );
  }
  const parsed = deviceProfileSchema.safeParse(json);
  if (!parsed.success)
    throw new ApiError(
      `${path} is not a device profile (make one with \`gpu-workbench devices --save-profile FILE\`): ${describeIssues(parsed.error)}`,
      'BAD_PROFILE',
    );
  return parsed.data;
}

async function profilesIn(dir: string, source: 'shipped' | 'user'): Promise<ProfileEntry[]> {
  const files = await readdir(dir).catch(() => [] as string[]);
  const out: ProfileEntry[] = [];
  for (const f of files.filter((f) => f.endsWith('.json')).sort()) {
    try {
      const profile = await loadProfileFile(join(dir, f));
      out.push({
        id: `${source}:${f}`,
        label: `${profile.device.name} (${source === 'shipped' ? 'profile' : 'my profile'}, driver ${profile.driverVersion ?? '?'})`,
        source,
        profile,
      });
    } catch {
      // a broken user file is skipped here; `validate --profile` reports it
    }
  }
  return out;
}

/** Live devices first, then the profiles that ship with the workbench, then the user's own. */
export async function listProfiles(): Promise<ProfileEntry[]> {
  const devices = await listDevices();
  const live: ProfileEntry[] = devices.ok
    ? devices.devices.map((d) => ({
        id: `device:${d.ordinal}`,
        label: `${d.ordinal}: ${d.name} (this machine)`,
        source: 'device' as const,
        profile: makeProfile(d, devices.driverVersion, new Date().toISOString()),
      }))
    : [];
  return [...live, ...(await profilesIn(join(projectRoot(), 'profiles'), 'shipped')), ...(await profilesIn(userProfileDir(), 'user'))];
}

export async function saveProfile(profile: DeviceProfile, path: string | null): Promise<string> {
  const target = path ?? join(userProfileDir(), `${profile.device.name.replace(/[^\w.-]+/g, '-').toLowerCase()}.json`);
  await mkdir(join(target, '..'), { recursive: true });
  await writeFile(target, JSON.stringify(profile, null, 2) + '\n');
  return target;
}
