import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { ReaderError, runReader } from '../../main/readers/reader-process';
import { ROOT, runCli } from '../helpers/cli';

// A saved profile is a file from outside: read in a reader process, checked against its schema, refused in words.
const dir = mkdtempSync(join(tmpdir(), 'wb-profile-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = join(ROOT, 'test/fixtures/ncu/profile-broken.json');

const refusal = async (path: string, maxBytes = 1 << 20): Promise<ReaderError> => {
  try {
    await runReader({ kind: 'profile', path, maxBytes }, path);
  } catch (error) {
    assert.ok(error instanceof ReaderError, String(error));
    return error;
  }
  assert.fail('the reader accepted it');
};

test('a profile recorded on the H100 opens through the reader as it was saved', async () => {
  const { value } = await runReader<{ kind: string; kernel: { entry: string } }>({ kind: 'profile', path: FIXTURE, maxBytes: 1 << 20 }, FIXTURE);
  assert.equal(value.kind, 'gpu-workbench-profile');
  assert.equal(value.kernel.entry, 'transpose');
});

test('not a profile, a figure out of range, too large, or deeply nested: refused with what to open instead', async () => {
  const other = join(dir, 'result.json');
  writeFileSync(other, JSON.stringify({ kind: 'something-else' }));
  assert.match((await refusal(other)).message, /is not a profile .*gpu-workbench profile --save/);
  const negative = join(dir, 'negative.json');
  const profile = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { counters: { durationNs: number } };
  profile.counters.durationNs = -5;
  writeFileSync(negative, JSON.stringify(profile));
  assert.match((await refusal(negative)).message, /counters\.durationNs/);
  const big = join(dir, 'big.json');
  writeFileSync(big, `[${'0,'.repeat(600_000)}0]`);
  assert.match((await refusal(big, 1 << 20)).message, /big\.json/);
  const deep = join(dir, 'deep.json');
  writeFileSync(deep, '['.repeat(100_000) + ']'.repeat(100_000));
  assert.equal((await refusal(deep, 1 << 20)).kind, 'not-a-profile');
  // Not a regular file: a FIFO named like a profile, and a device, are refused at once, never read.
  const fifo = join(dir, 'fifo.json');
  execFileSync('mkfifo', [fifo]);
  const started = Date.now();
  assert.equal((await refusal(fifo)).kind, 'unreadable');
  assert.equal((await refusal('/dev/zero')).kind, 'unreadable');
  assert.ok(Date.now() - started < 5_000, 'refused without waiting on the FIFO');
});

test('profile --compare with a file that is not a profile: exit 64 and the reason, no stack trace', async () => {
  const other = join(dir, 'not-a-profile.json');
  writeFileSync(other, '{"hello": 1}');
  const r = await runCli(['profile', '--sample', 'uncoalesced-access', '--compare', other]);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /✗ .*not-a-profile\.json is not a profile/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

test('profile without a GPU: exit 2 and the driver named, nothing profiled', async () => {
  const r = await runCli(['profile', '--sample', 'uncoalesced-access']);
  assert.equal(r.code, 2);
  assert.match(r.stdout, /No NVIDIA driver found/);
  assert.match(r.stdout, /Not profiled/);
});
