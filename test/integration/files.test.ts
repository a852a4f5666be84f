import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, linkSync, lstatSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { readTextFile, writeTextFile } from '../../main/services/file-service';
import { DraftStore } from '../../main/services/draft-store';
import { readPlanFile, writeJsonFile } from '../../main/services/plan-files';
import { writeStreamAtomic } from '../../main/services/safe-fs';

const dir = () => mkdtempSync(join(tmpdir(), 'wb-files-'));

test('reads: /dev/zero, a FIFO and a folder are refused at once, never read without bound or waited on', async () => {
  const d = dir();
  const fifo = join(d, 'pipe');
  execFileSync('mkfifo', [fifo]);
  const started = performance.now();
  await assert.rejects(readTextFile('/dev/zero'), /not a regular file/);
  // Four at once used to freeze every file read of the host.
  await Promise.all([1, 2, 3, 4].map(() => assert.rejects(readTextFile(fifo), /not a regular file/)));
  await assert.rejects(readTextFile(d), /it is a folder/);
  await assert.rejects(readPlanFile('/dev/zero'), /not a regular file/);
  await assert.rejects(readPlanFile(fifo), /not a regular file/);
  assert.ok(performance.now() - started < 5_000, 'a refusal must not wait');
  const big = join(d, 'big.cu');
  writeFileSync(big, Buffer.alloc(17 * 1024 * 1024, 0x20));
  await assert.rejects(readTextFile(big), /larger than the 16 MiB the editor opens/);
});

test('writes keep the mode, write through a symlink, and leave no temporary file', async () => {
  const d = dir();
  const secret = join(d, 'secret.cu');
  writeFileSync(secret, 'old');
  chmodSync(secret, 0o600);
  await writeTextFile(secret, 'new', null);
  assert.equal(statSync(secret).mode & 0o777, 0o600);
  assert.equal(readFileSync(secret, 'utf8'), 'new');

  const target = join(d, 'real.cu');
  const link = join(d, 'link.cu');
  writeFileSync(target, 'v1');
  symlinkSync(target, link);
  await writeTextFile(link, 'v2', null);
  assert.ok(lstatSync(link).isSymbolicLink(), 'the link stays a link');
  assert.equal(readFileSync(target, 'utf8'), 'v2', 'the save went to the link’s target');
  assert.deepEqual(
    readdirSync(d).filter((f) => f.endsWith('.tmp')),
    [],
  );
});

test('concurrent saves of one path each land whole, under names of their own', async () => {
  const d = dir();
  const file = join(d, 'plan.json');
  const texts = Array.from({ length: 24 }, (_, i) => JSON.stringify({ writer: i, pad: 'x'.repeat(50_000 + i) }));
  await Promise.all(texts.map((t) => writeJsonFile(file, JSON.parse(t))));
  const final = JSON.parse(readFileSync(file, 'utf8')) as { writer: number; pad: string };
  assert.equal(final.pad.length, 50_000 + final.writer, 'the file is one whole write, not a mix');
  assert.deepEqual(
    readdirSync(d).filter((f) => f.endsWith('.tmp')),
    [],
  );
});

test('a save killed before its rename leaves the old file whole, and its temporary file is removed by the next save', async () => {
  const d = dir();
  const file = join(d, 'k.cu');
  writeFileSync(file, 'old contents');
  // What a save killed with SIGKILL leaves: a temporary file of a process that no longer exists.
  const dead = 2 ** 22 + 12345;
  writeFileSync(join(d, `.k.cu.${dead}.0123456789ab.tmp`), 'half a fi');
  assert.equal((await readTextFile(file)).text, 'old contents');
  await writeTextFile(file, 'new contents', null);
  assert.deepEqual(
    readdirSync(d).filter((f) => f.endsWith('.tmp')),
    [],
  );
});

test('a write in pieces (a bundle, a trace) that fails half-way leaves the old file whole, its mode and link kept, and no temporary file', async () => {
  const d = dir();
  const real = join(d, 'real.zip');
  writeFileSync(real, 'old');
  chmodSync(real, 0o600);
  const link = join(d, 'link.zip');
  symlinkSync(real, link);
  await assert.rejects(
    writeStreamAtomic(link, async (handle) => {
      await handle.write(Buffer.from('half of it'));
      throw new Error('the zip stream broke');
    }),
    /the zip stream broke/,
  );
  assert.equal(readFileSync(real, 'utf8'), 'old');
  assert.deepEqual(readdirSync(d).sort(), ['link.zip', 'real.zip']);
  const written = await writeStreamAtomic(link, async (handle) => {
    await handle.write(Buffer.from('new, '));
    await handle.write(Buffer.from('in pieces'));
  });
  assert.equal(written.path, real);
  assert.equal(readFileSync(link, 'utf8'), 'new, in pieces');
  assert.ok(lstatSync(link).isSymbolicLink());
  assert.equal(statSync(real).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(d).sort(), ['link.zip', 'real.zip']);
});

test('drafts are 0600 in a 0700 folder, and temporary files of killed saves go at start', async () => {
  const d = join(dir(), 'drafts');
  const store = new DraftStore(d);
  await store.list();
  writeFileSync(join(d, `.abc.${2 ** 22 + 999}.0123456789ab.tmp`), '{');
  const again = new DraftStore(d);
  await again.save({ id: 'abc', path: null, name: 'k.cu', text: '__global__ void k() {}', order: 0, savedText: null, savedMtimeMs: null });
  assert.equal(statSync(d).mode & 0o777, 0o700);
  for (const f of readdirSync(d)) assert.equal(statSync(join(d, f)).mode & 0o777, 0o600, f);
  assert.deepEqual(
    readdirSync(d).filter((f) => f.endsWith('.tmp')),
    [],
  );
});

test('a plan file names only files in its own folder: absolute paths, .. and links out are refused', async () => {
  const d = dir();
  const secret = join(dir(), 'id_rsa');
  writeFileSync(secret, 'PRIVATE KEY');
  writeFileSync(join(d, 'k.cu'), '__global__ void k(float* p) {}');
  symlinkSync(secret, join(d, 'innocent.bin'));
  const plan = (over: object) => {
    const path = join(d, `plan-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(
      path,
      JSON.stringify({
        version: 1,
        kernels: [{ id: 'k', entry: 'k', sourceFile: 'k.cu' }],
        buffers: [{ name: 'p', type: 'u8', count: 11, init: { kind: 'file', path: 'data.bin' } }],
        steps: [{ op: 'alloc', buffer: 'p' }],
        ...over,
      }),
    );
    return path;
  };
  writeFileSync(join(d, 'data.bin'), Buffer.alloc(11));
  const ok = (await readPlanFile(plan({}))).plan as { buffers: { init: { path: string } }[] };
  assert.equal(ok.buffers[0]!.init.path, join(d, 'data.bin'));
  for (const [over, why] of [
    [{ buffers: [{ name: 'p', type: 'u8', count: 11, init: { kind: 'file', path: secret } }] }, /is an absolute path/],
    [{ buffers: [{ name: 'p', type: 'u8', count: 11, init: { kind: 'file', path: '../../etc/passwd' } }] }, /leaves the plan's folder/],
    [{ buffers: [{ name: 'p', type: 'u8', count: 11, init: { kind: 'file', path: 'innocent.bin' } }] }, /is a link out of the plan's folder/],
    [{ kernels: [{ id: 'k', entry: 'k', sourceFile: '/etc/hostname' }] }, /sourceFile "\/etc\/hostname" is an absolute path/],
  ] as const)
    await assert.rejects(readPlanFile(plan(over)), why);
});

test('a save through a dangling link creates the link’s target and keeps the link; a loop of links is refused in words', async () => {
  const d = dir();
  const link = join(d, 'link.cu');
  symlinkSync('made-by-save.cu', link);
  const chain = join(d, 'chain.cu');
  symlinkSync(link, chain);
  await writeTextFile(chain, 'through two links', null);
  assert.ok(lstatSync(link).isSymbolicLink() && lstatSync(chain).isSymbolicLink(), 'both links stay links');
  assert.equal(readFileSync(join(d, 'made-by-save.cu'), 'utf8'), 'through two links');

  symlinkSync('loop-b.cu', join(d, 'loop-a.cu'));
  symlinkSync('loop-a.cu', join(d, 'loop-b.cu'));
  await assert.rejects(writeTextFile(join(d, 'loop-a.cu'), 'x', null), /loop-a\.cu is a link that leads round in a loop/);
  assert.ok(lstatSync(join(d, 'loop-a.cu')).isSymbolicLink());
  assert.deepEqual(
    readdirSync(d).filter((f) => f.endsWith('.tmp')),
    [],
  );
});

test('a save as root keeps the file’s owner and group, and its mode', async (t) => {
  if (process.getuid?.() !== 0) return t.skip('only root can give a file to another user');
  const file = join(dir(), 'theirs.cu');
  writeFileSync(file, 'old');
  chownSync(file, 1234, 1235);
  chmodSync(file, 0o640);
  await writeTextFile(file, 'new', null);
  const after = statSync(file);
  assert.deepEqual([after.uid, after.gid, after.mode & 0o7777], [1234, 1235, 0o640]);
  assert.equal(readFileSync(file, 'utf8'), 'new');
});

test('a save of a file with several hard links writes it in place: every link sees the new text', async () => {
  const d = dir();
  const file = join(d, 'k.cu');
  const other = join(d, 'other-name.cu');
  writeFileSync(file, 'old contents, longer than the new');
  linkSync(file, other);
  const before = statSync(file);
  await writeTextFile(file, 'new', null);
  assert.equal(readFileSync(other, 'utf8'), 'new');
  const after = statSync(file);
  assert.deepEqual([after.ino, after.nlink], [before.ino, 2], 'the same file, still linked twice');

  // A write that fails half-way leaves both names with the old text.
  await assert.rejects(
    writeStreamAtomic(other, async (handle) => {
      await handle.write(Buffer.from('half of it'));
      throw new Error('the zip stream broke');
    }),
    /the zip stream broke/,
  );
  assert.equal(readFileSync(file, 'utf8'), 'new');
  assert.deepEqual(readdirSync(d).sort(), ['k.cu', 'other-name.cu']);
});
