import { readdir, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { restoreDraft, type Draft, type RestoredDraft } from '../../core/api/drafts';
import { BUNDLE_JSON_LIMITS } from '../../core/bundle/bundle-limits';
import { parseJsonWithin, type JsonLimits } from '../../core/json-limits';
import { MAX_SOURCE_BYTES } from '../../core/limits';
import { privateDir, readRegularFile, removeStaleTemps, writeFileAtomic } from './safe-fs';

export const defaultStateDir = (): string =>
  process.env['GPU_WORKBENCH_STATE_DIR'] ?? join(process.env['XDG_STATE_HOME'] ?? join(homedir(), '.local', 'state'), 'gpu-workbench');

/**
 * The JSON of the largest draft the schema accepts: text and savedText at their limit, every character escaped
 * (6 bytes), and its plan at a plan file's limit.
 */
export const MAX_DRAFT_FILE_BYTES = 2 * 6 * MAX_SOURCE_BYTES + MAX_SOURCE_BYTES + 64 * 1024;

/** What a draft's JSON may hold, counted before it is parsed (a plan's own limits, and the texts' strings). */
const DRAFT_JSON_LIMITS: JsonLimits = {
  bytes: MAX_DRAFT_FILE_BYTES,
  depth: 32,
  items: BUNDLE_JSON_LIMITS.plan.items + 1000,
  stringBytes: 6 * MAX_SOURCE_BYTES,
  role: 'a draft',
};

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

  /** Every draft that reads back as one; a draft's plan is checked on its own, and dropped with its reason when it is not valid. */
  async list(): Promise<RestoredDraft[]> {
    await this.prepare().catch(() => undefined);
    const files = await readdir(this.dir).catch(() => [] as string[]);
    const drafts: RestoredDraft[] = [];
    for (const f of files.filter((f) => f.endsWith('.json') && !f.startsWith('.'))) {
      try {
        const bytes = (await readRegularFile(join(this.dir, f), MAX_DRAFT_FILE_BYTES)).bytes;
        const draft = restoreDraft(parseJsonWithin(bytes, DRAFT_JSON_LIMITS, `Draft ${f}`));
        if (draft) drafts.push(draft);
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
