import { join } from 'node:path';

import { DEFAULT_WORKSPACE_SETTINGS, workspaceSettingsSchema, type WorkspaceSettings } from '../../core/api/workspace';
import { defaultStateDir } from './draft-store';
import { privateDir, readRegularFile, writeFileAtomic } from './safe-fs';

const MAX_SETTINGS_BYTES = 64 * 1024;

/** The workspace's settings (the chosen device or profile), one small file beside the drafts. */
export class WorkspaceStore {
  constructor(readonly file: string = join(defaultStateDir(), 'workspace.json')) {}

  async get(): Promise<WorkspaceSettings> {
    try {
      const parsed = workspaceSettingsSchema.safeParse(JSON.parse((await readRegularFile(this.file, MAX_SETTINGS_BYTES)).bytes.toString('utf8')));
      return parsed.success ? parsed.data : DEFAULT_WORKSPACE_SETTINGS;
    } catch {
      return DEFAULT_WORKSPACE_SETTINGS; // none yet, damaged, or not a regular file: the defaults, never a failure
    }
  }

  /** Changes one at a time, in the order they came: the last choice made is the one kept. */
  private queue: Promise<unknown> = Promise.resolve();

  set(change: Partial<WorkspaceSettings>): Promise<WorkspaceSettings> {
    const next = this.queue.then(async () => {
      const settings = workspaceSettingsSchema.parse({ ...(await this.get()), ...change });
      await privateDir(join(this.file, '..'));
      await writeFileAtomic(this.file, JSON.stringify(settings), { mode: 0o600, forceMode: true });
      return settings;
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}
