import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  ancestorsOf,
  commandLineOf,
  EXITED_GRACE_US,
  flagProcess,
  INITIAL_PID_NAMESPACE_INODE,
  isGone,
  MAX_COMMAND_CHARS,
  parseProcStat,
  pidNamespaceOf,
  realUidOf,
  relationOf,
  userNameOf,
  type ProcessFacts,
} from '../../core/memory/process-flags';

// /proc text as Linux writes it (recorded from a Linux 6.x machine, pids changed).
const STAT_PYTHON =
  '4242 (python3) S 4200 4242 4100 34816 4242 4194560 51234 0 12 0 812 95 0 0 20 0 9 0 123456789 9876543210 456789 18446744073709551615 94000000000000 94000000100000 140720000000000 0 0 0 0 16781312 1082133752 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n';
const STAT_ZOMBIE =
  '5151 (pt_data_worker) Z 4242 4242 4100 0 -1 4227148 1290 0 0 0 31 7 0 0 20 0 1 0 123460000 0 0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 5 0 0 0 0 0 0 0 0 0 0 0 0 0\n';
// A name may hold spaces and parentheses: the kernel does not escape it, so only the last ')' ends it.
const STAT_ODD_NAME =
  '77 (a) b (c)) R 1 77 77 0 -1 4194304 100 0 0 0 1 1 0 0 20 0 1 0 555 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n';
const STATUS =
  'Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nNgid:\t0\nPid:\t4242\nPPid:\t4200\nTracerPid:\t0\nUid:\t1001\t1001\t1001\t1001\nGid:\t1001\t1001\t1001\t1001\n';
const PASSWD = 'root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\nana:x:1001:1001:Ana,,,:/home/ana:/bin/bash\n';

test('/proc/PID/stat: state, parent, group and start time; a name with spaces and parentheses; garbage refused', () => {
  assert.deepEqual(parseProcStat(STAT_PYTHON), { pid: 4242, comm: 'python3', state: 'S', ppid: 4200, pgrp: 4242, startTime: 123456789 });
  const zombie = parseProcStat(STAT_ZOMBIE)!;
  assert.equal(zombie.state, 'Z');
  assert.equal(zombie.ppid, 4242);
  assert.ok(isGone(zombie));
  assert.ok(isGone(null));
  assert.ok(!isGone(parseProcStat(STAT_PYTHON)));
  const odd = parseProcStat(STAT_ODD_NAME)!;
  assert.equal(odd.comm, 'a) b (c)');
  assert.equal(odd.state, 'R');
  assert.equal(odd.ppid, 1);
  for (const bad of [
    '',
    'garbage',
    '12 (x) S 1 2',
    '12 (x) ? 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20',
    'x (y) S 1 1 1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1',
  ])
    assert.equal(parseProcStat(bad), null, JSON.stringify(bad));
});

test('/proc/PID/cmdline: NUL-separated arguments shown joined, control characters shown, long lines cut, empty is null', () => {
  assert.equal(commandLineOf('python3\0train.py\0--epochs\x0010\0'), 'python3 train.py --epochs 10');
  assert.equal(commandLineOf('a\x1bb\0c\n'), 'a?b c?');
  assert.equal(commandLineOf(''), null);
  assert.equal(commandLineOf('\0\0'), null);
  const long = commandLineOf(`python3\0${'x'.repeat(2000)}`)!;
  assert.equal(long.length, MAX_COMMAND_CHARS);
  assert.ok(long.endsWith('…'));
});

test('owner: the real uid from /proc/PID/status, its name from /etc/passwd', () => {
  assert.equal(realUidOf(STATUS), 1001);
  assert.equal(realUidOf('Name:\tx\n'), null);
  assert.equal(userNameOf(PASSWD, 1001), 'ana');
  assert.equal(userNameOf(PASSWD, 0), 'root');
  assert.equal(userNameOf(PASSWD, 4242), null);
  assert.equal(userNameOf('broken line\n::x:\n', 0), null);
});

test('PID namespace: the kernel’s fixed inode of the initial one; any other is nested; unreadable is unknown', () => {
  assert.equal(INITIAL_PID_NAMESPACE_INODE, 4026531836);
  assert.equal(pidNamespaceOf('pid:[4026531836]'), 'initial');
  assert.equal(pidNamespaceOf('pid:[4026532301]'), 'nested');
  assert.equal(pidNamespaceOf(null), 'unknown');
  assert.equal(pidNamespaceOf('net:[4026531836]'), 'unknown');
});

test('ancestry follows ppids, nearest first, bounded, and stops at init or at a loop', () => {
  const parents: Record<number, number> = { 50: 40, 40: 30, 30: 1, 1: 0, 7: 8, 8: 7 };
  const parentOf = (pid: number) => parents[pid] ?? null;
  assert.deepEqual(ancestorsOf(50, parentOf), [40, 30, 1]);
  assert.deepEqual(ancestorsOf(7, parentOf), [8], 'a loop ends the walk');
  assert.deepEqual(ancestorsOf(99, parentOf), [], 'an unreadable parent ends it');
  const chain = (pid: number) => pid + 1;
  assert.equal(ancestorsOf(100, chain, 64).length, 64, 'at most maxHops');
});

test('relation: the target, its descendants, the workbench (this host, its children, runners by command line), else other', () => {
  const context = { targetPid: 4242, hostPid: 1000 };
  assert.equal(relationOf(4242, [4200, 1], 'python3 train.py', context), 'target');
  assert.equal(relationOf(5151, [4242, 4200, 1], null, context), 'target-descendant');
  assert.equal(relationOf(1000, [999, 1], null, context), 'workbench');
  assert.equal(relationOf(2000, [1000, 999, 1], '/usr/bin/node /opt/wb/dist/main/runner.js', context), 'workbench');
  assert.equal(relationOf(3000, [1], '/usr/bin/node /srv/gpu-workbench/dist/main/runner.js', context), 'workbench', 'another host’s runner');
  assert.equal(relationOf(3001, [1], '/usr/bin/node dist/main/compile-worker.js', context), 'workbench');
  assert.equal(relationOf(3002, [1], 'python3 runner.jsx', context), 'other');
  assert.equal(relationOf(6000, [1], 'python3 someone_else.py', context), 'other');
  assert.equal(relationOf(4242, [1], null, { targetPid: null, hostPid: 1000 }), 'other', 'no target: the whole device');
});

const facts = (over: Partial<ProcessFacts>): ProcessFacts => ({
  pid: 4242,
  device: 0,
  usedBytes: 2.1 * 2 ** 30,
  namespace: 'initial',
  liveness: 'alive',
  relation: 'target',
  listedAfterGoneUs: 0,
  parent: null,
  owner: { name: 'ana', mine: true },
  ...over,
});

test('exited: gone from /proc in the host’s namespace while NVML still counts it past the grace — with what to do', () => {
  assert.equal(
    flagProcess(facts({ liveness: 'absent', relation: null, listedAfterGoneUs: EXITED_GRACE_US - 1 })),
    null,
    'a teardown in progress is not flagged',
  );
  const f = flagProcess(facts({ liveness: 'absent', relation: null, listedAfterGoneUs: 3_000_000 }))!;
  assert.equal(f.kind, 'exited');
  assert.match(f.text, /PID 4242 has exited, yet the driver still counts 2\.1 GiB on GPU 0 for it 3\.0 s later/);
  assert.match(f.fix, /wait a little/);
  assert.match(f.fix, /fuser -v \/dev\/nvidia\*/);
  assert.match(f.fix, /nvidia-smi --gpu-reset` needs no process on the GPU/);
});

test('a zombie is exited in any namespace, and the fix names the parent that has not reaped it', () => {
  const f = flagProcess(
    facts({ namespace: 'nested', liveness: 'zombie', relation: null, listedAfterGoneUs: 2_000_000, parent: { pid: 4200, command: 'bash run.sh' } }),
  )!;
  assert.equal(f.kind, 'exited');
  assert.match(f.text, /still a zombie/);
  assert.match(f.fix, /its parent, PID 4200 \(bash run\.sh\)/);
});

test('not-visible: absent in a nested namespace (a container), or where the namespace cannot be read', () => {
  const nested = flagProcess(facts({ namespace: 'nested', liveness: 'absent', relation: null, listedAfterGoneUs: 5_000_000 }))!;
  assert.equal(nested.kind, 'not-visible');
  assert.match(nested.text, /this container cannot see it/);
  assert.match(nested.fix, /--pid=host/);
  const unknown = flagProcess(facts({ namespace: 'unknown', liveness: 'absent', relation: null, listedAfterGoneUs: 5_000_000 }))!;
  assert.equal(unknown.kind, 'not-visible');
  assert.match(unknown.text, /cannot read its own PID namespace/);
  assert.equal(flagProcess(facts({ namespace: 'nested', liveness: 'absent', relation: null, listedAfterGoneUs: 10 })), null);
});

test('foreign: alive and started by nothing the user runs here; its owner decides the fix', () => {
  for (const relation of ['target', 'target-descendant', 'workbench'] as const) assert.equal(flagProcess(facts({ relation })), null, relation);
  const mine = flagProcess(facts({ pid: 6000, relation: 'other' }))!;
  assert.equal(mine.kind, 'foreign');
  assert.match(mine.text, /PID 6000 holds 2\.1 GiB on GPU 0, and neither the monitored program nor the workbench started it \(it belongs to you/);
  assert.match(mine.fix, /kill 6000/);
  const theirs = flagProcess(facts({ pid: 6001, relation: 'other', owner: { name: 'bob', mine: false } }))!;
  assert.match(theirs.fix, /ask its owner \(bob\)/);
  assert.match(theirs.fix, /gpu-reset/);
  const unsized = flagProcess(facts({ pid: 6002, relation: 'other', usedBytes: null, owner: null }))!;
  assert.match(unsized.text, /memory NVML cannot size/);
  assert.match(unsized.text, /another user/);
});
