import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

import { draftSchema, type Draft } from '../../core/api/drafts';

export const defaultStateDir = (): string =>
  process.env['GPU_WORKBENCH_STATE_DIR'] ?? join(process.env['XDG_STATE_HOME'] ?? join(homedir(), '.local', 'state'), 'gpu-workbench');

/**
 * Unsaved editor contents, one file per open document, written atomically on every (debounced) edit,
 * so that a crash or a restart loses nothing. A draft goes when its tab is closed.
 */
export class DraftStore {
  constructor(readonly dir: string = join(defaultStateDir(), 'drafts')) {}

  async list(): Promise<Draft[]> {
    const files = await readdir(this.dir).catch(() => [] as string[]);
    const drafts: Draft[] = [];
    for (const f of files.filter((f) => f.endsWith('.json') && !f.startsWith('.'))) {
      try {
        const parsed = draftSchema.safeParse(JSON.parse(await readFile(join(this.dir, f), 'utf8')));
        if (parsed.success) drafts.push(parsed.data);
      } catch {
        // a damaged draft is skipped, never fatal
      }
    }
    return drafts.sort((a, b) => a.order - b.order);
  }

  async save(draft: Draft): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const tmp = join(this.dir, `.${draft.id}.${process.pid}.tmp`);
    await writeFile(tmp, JSON.stringify(draft));
    await rename(tmp, join(this.dir, `${draft.id}.json`));
  }

  async discard(id: string): Promise<void> {
    await rm(join(this.dir, `${id}.json`), { force: true });
  }
}
