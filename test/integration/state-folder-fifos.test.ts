import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { CompileCache } from '../../main/compile/compile-cache';
import { DraftStore, MAX_DRAFT_FILE_BYTES } from '../../main/services/draft-store';
import { loadProfileFile } from '../../main/services/profile-service';
import { WorkspaceStore } from '../../main/services/workspace-store';

const dir = () => mkdtempSync(join(tmpdir(), 'wb-fifos-'));
const fifos: string[] = [];
const mkfifo = (path: string) => {
  execFileSync('mkfifo', [path]);
  fifos.push(path);
  return path;
};

/**
 * The answer within `ms`, or a failure. A read blocked on a FIFO holds one of libuv's threads until a writer comes:
 * one is opened and closed, so the reader sees the end of the file and the test process can exit.
 */
async function promptly<T>(what: string, work: Promise<T>, ms = 3_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} waited on a FIFO`)), ms)))]);
  } finally {
    clearTimeout(timer);
    for (const fifo of fifos.splice(0)) {
      try {
        closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // no reader waits on it
      }
    }
  }
}

const draft = { id: 'good', path: null, name: 'k.cu', text: '__global__ void k() {}', order: 0, savedText: null, savedMtimeMs: null };

test('drafts: a FIFO named *.json is skipped at once, a file past the bound is not read, the other drafts are listed', async () => {
  const d = join(dir(), 'drafts');
  const store = new DraftStore(d);
  await store.save(draft);
  mkfifo(join(d, 'evil.json'));
  writeFileSync(join(d, 'huge.json'), '');
  truncateSync(join(d, 'huge.json'), MAX_DRAFT_FILE_BYTES + 1);
  // Four at once: each used to hold one of the four threads every file read of the host goes through.
  const lists = await promptly('drafts.list', Promise.all([1, 2, 3, 4].map(() => new DraftStore(d).list())));
  for (const listed of lists) assert.deepEqual(listed, [draft]);
});

test('workspace settings, device profiles and compile cache entries: a FIFO in their place is refused at once', async () => {
  const state = dir();
  const settings = mkfifo(join(state, 'workspace.json'));
  assert.deepEqual(await promptly('workspace.get', new WorkspaceStore(settings).get()), { profileId: null });

  const profile = mkfifo(join(dir(), 'mine.json'));
  await promptly('loadProfileFile', assert.rejects(loadProfileFile(profile), /not a regular file/));

  const cacheDir = join(dir(), 'compile');
  mkdirSync(cacheDir);
  writeFileSync(join(cacheDir, 'k.json'), JSON.stringify({ result: { ok: true }, hasImage: true }));
  mkfifo(join(cacheDir, 'k.bin'));
  mkfifo(join(cacheDir, 'f.json'));
  const cache = new CompileCache(cacheDir);
  assert.deepEqual(await promptly('compile cache', Promise.all([cache.get('k'), cache.get('f')])), [null, null]);
});
