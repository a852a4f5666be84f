import { readdir, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { draftSchema, type Draft } from '../../core/api/drafts';
import { MAX_SOURCE_BYTES } from '../../core/limits';
import { privateDir, readRegularFile, removeStaleTemps, writeFileAtomic } from './safe-fs';

export const defaultStateDir = (): string =>
  process.env['GPU_WORKBENCH_STATE_DIR'] ?? join(process.env['XDG_STATE_HOME'] ?? join(homedir(), '.local', 'state'), 'gpu-workbench');

/** The JSON of the largest draft the schema accepts: text and savedText at their limit, every character escaped (6 bytes). */
export const MAX_DRAFT_FILE_BYTES = 2 * 6 * MAX_SOURCE_BYTES + 64 * 1024;

/**
 * Unsaved editor contents, one file per open document, written atomically on every (debounced) edit,
 * so that a crash or a restart loses nothing. A draft goes when its tab is closed. Drafts are the
 * user's source: 0600 files in a 0700 folder.
 */
export class DraftStore {
  private ready: Promise<void> | null = null;

  constructor(readonly dir: string = join(defaultStateDir(), 'drafts')) {}

  /** Once per store: the folder made private, and temporary files of killed saves removed. */
  private prepare(): Promise<void> {
    this.ready ??= privateDir(this.dir)
      .then(async () => void (await removeStaleTemps(this.dir)))
      .catch((error: unknown) => {
        this.ready = null; // the next save tries again
        throw error;
      });
    return this.ready;
  }

  async list(): Promise<Draft[]> {
    await this.prepare().catch(() => undefined);
    const files = await readdir(this.dir).catch(() => [] as string[]);
    const drafts: Draft[] = [];
    for (const f of files.filter((f) => f.endsWith('.json') && !f.startsWith('.'))) {
      try {
        const parsed = draftSchema.safeParse(JSON.parse((await readRegularFile(join(this.dir, f), MAX_DRAFT_FILE_BYTES)).bytes.toString('utf8')));
        if (parsed.success) drafts.push(parsed.data);
      } catch {
        // a damaged draft, or one that is not a regular file, is skipped, never fatal
      }
    }
    return drafts.sort((a, b) => a.order - b.order);
  }

  async save(draft: Draft): Promise<void> {
    await this.prepare();
    await writeFileAtomic(join(this.dir, `${draft.id}.json`), JSON.stringify(draft), { mode: 0o600, forceMode: true });
  }

  async discard(id: string): Promise<void> {
    await rm(join(this.dir, `${id}.json`), { force: true });
  }
}
