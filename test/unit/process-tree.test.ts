import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseProcStat } from '../../core/memory/process-flags';
import { descendantsOf, MAX_DESCENDANTS, type ProcessLink } from '../../core/process/process-tree';

// The workbench's own processes from a /proc snapshot. The snapshot below is /proc/PID/stat as the kernel writes
// it (fields after the name cut short after starttime, which is all that is read), for a host running a plan
// under compute-sanitizer: the pool knows the tool's pid (4100), the runner holding the CUDA context is its child.
const stat = (pid: number, comm: string, ppid: number, pgrp = pid) =>
  `${pid} (${comm}) S ${ppid} ${pgrp} ${pgrp} 0 -1 4194560 5870 0 0 0 13 4 0 0 20 0 11 0 3450316 1124478976 12045 18446744073709551615`;
const SNAPSHOT = [
  stat(1, 'init', 0),
  stat(4000, 'node', 1), // the host (gpu-workbench serve)
  stat(4010, 'node', 4000), // its runner for device 0 (the main pool's)
  stat(4011, 'node', 4000), // the warm spare
  stat(4020, 'node', 4000), // a compile worker
  stat(4100, 'compute-sanitiz', 4000), // the tool (sh exec'd into it; the kernel keeps 15 characters of its name)
  stat(4101, 'sh', 4100, 4100), // the group's reaper
  stat(4102, 'node', 4100, 4100), // the runner under the tool: the process NVML lists as holding the context
  stat(4103, 'weird) (name', 4102, 4100), // something the runner started, with a name made to confuse a parser
  stat(5000, 'python3', 1), // someone else's training job
  stat(5001, 'python3', 5000),
].join('\n');

const table = (): ProcessLink[] =>
  SNAPSHOT.split('\n').map((line) => {
    const parsed = parseProcStat(line);
    assert.ok(parsed, line);
    return { pid: parsed.pid, ppid: parsed.ppid };
  });

test("the runner under compute-sanitizer is the tool's child: found from the tool's pid, with all it started, and nothing else", () => {
  assert.deepEqual(descendantsOf([4100], table()), [4101, 4102, 4103]);
  assert.equal(parseProcStat(stat(4103, 'weird) (name', 4102))?.ppid, 4102, 'the name ends at the last parenthesis');
});

test("from the host: its runners, spare, compile worker, the tool and the tool's runner; never another user's job", () => {
  const own = descendantsOf([4000], table());
  assert.deepEqual(own, [4010, 4011, 4020, 4100, 4101, 4102, 4103], 'generation by generation');
  assert.ok(!own.includes(5000) && !own.includes(5001));
  assert.ok(!own.includes(4000), 'the roots are not their own descendants');
  assert.deepEqual(
    descendantsOf([4000, 4100], table()),
    own.filter((p) => p !== 4100),
    'a root is never returned (the caller has it), even inside another root; each pid once',
  );
});

test('a snapshot taken one file at a time can hold a loop (a pid reused between reads): each pid once, and the walk ends', () => {
  const looped: ProcessLink[] = [
    { pid: 10, ppid: 20 },
    { pid: 20, ppid: 10 },
    { pid: 30, ppid: 20 },
    { pid: 40, ppid: 40 },
    { pid: -5, ppid: 10 },
  ];
  assert.deepEqual(descendantsOf([10], looped), [20, 30]);
  assert.deepEqual(descendantsOf([40], looped), []);
  assert.deepEqual(descendantsOf([99], looped), [], 'a pid not in the table has no descendants');
  assert.deepEqual(descendantsOf([], table()), []);
});

test('bounded: a fork bomb under a root gives at most MAX_DESCENDANTS pids', () => {
  const bomb: ProcessLink[] = Array.from({ length: 50_000 }, (_, i) => ({ pid: 100 + i, ppid: i < 10 ? 1 : 100 + Math.floor((i - 10) / 3) }));
  const out = descendantsOf([100], bomb);
  assert.equal(out.length, MAX_DESCENDANTS);
  assert.equal(new Set(out).size, out.length);
  assert.deepEqual(out.slice(0, 3), [110, 111, 112], 'its children first');
  assert.deepEqual(descendantsOf([100], bomb, 5), out.slice(0, 5));
});
