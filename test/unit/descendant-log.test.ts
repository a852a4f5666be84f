import assert from 'node:assert/strict';
import { test } from 'node:test';

import { COMMAND_READS, DescendantLog, parseChildren, pickRecord, wantsCommandRead, type DescendantRecord } from '../../core/memory/descendant-log';

// What the descendant watcher keeps of the monitored program's children, and how a pid NVML names is matched to
// one of them. /proc/PID/task/TID/children as Linux writes it: pids separated by single spaces, and a trailing space.
const record = (pid: number, startTime: number, extra: Partial<DescendantRecord> = {}): DescendantRecord => ({
  pid,
  startTime,
  ppid: 1215,
  ancestors: [1215],
  comm: 'python3',
  command: null,
  commandReads: 0,
  firstSeenUs: 1_000,
  lastSeenUs: 1_000,
  ...extra,
});

test('a children file: pids in order; empty; junk skipped; a number cut at the read bound left out', () => {
  assert.deepEqual(parseChildren('1234 1240 1251 '), [1234, 1240, 1251]);
  assert.deepEqual(parseChildren(''), []);
  assert.deepEqual(parseChildren('\n'), []);
  assert.deepEqual(parseChildren('12 x 0 -3 1e3 99999999999 34\n'), [12, 34]);
  // The read stopped at its bound in the middle of "12345": that one is not trusted.
  assert.deepEqual(parseChildren('1234 1240 123', false), [1234, 1240]);
  assert.deepEqual(parseChildren('1234 1240 ', false), [1234, 1240], 'ends on a separator: nothing cut');
});

test('the record for a pid: with a start time only that very process; without one (gone from /proc) the latest of that pid', () => {
  const earlier = record(1234, 500, { command: 'sleep 1' });
  const later = record(1234, 900, { command: 'python3 -c … cache-server' });
  const other = record(1240, 600);
  const records = [earlier, other, later];
  assert.equal(pickRecord(records, 1234, 500), earlier);
  assert.equal(pickRecord(records, 1234, 900), later);
  assert.equal(pickRecord(records, 1234, 700), null, 'a process given a recorded pid later is not the recorded one');
  assert.equal(pickRecord(records, 1234, null), later, 'gone: the latest process that had the pid');
  assert.equal(pickRecord(records, 4321, null), null);
  assert.equal(pickRecord([], 1234, null), null);
});

test('a command line is read at first sight and once more (fork before exec), again after an exec, never from a zombie', () => {
  const r = record(1234, 900);
  assert.equal(wantsCommandRead(r, 'python3', false), true, 'never read');
  r.commandReads = 1;
  assert.equal(wantsCommandRead(r, 'python3', false), true, 'confirming read');
  r.commandReads = COMMAND_READS;
  assert.equal(wantsCommandRead(r, 'python3', false), false);
  assert.equal(wantsCommandRead(r, 'nvidia-smi', false), true, 'it exec’d another program');
  assert.equal(wantsCommandRead(record(1240, 1), 'python3', true), false, 'a zombie has no command line to read');
});

test('the log is bounded: a full log lets the oldest process no longer running go, and drops a new one when all still run', () => {
  const log = new DescendantLog(2);
  assert.ok(log.add(record(10, 1, { lastSeenUs: 100 }), 100));
  assert.ok(log.add(record(11, 1, { lastSeenUs: 100 }), 100));
  assert.equal(log.get(10, 1)?.pid, 10);
  // Both were found by the walk at 100 µs (the previous one): both run, so a third is not kept.
  assert.equal(log.add(record(12, 1, { lastSeenUs: 100 }), 100), false);
  assert.equal(log.add(record(12, 1, { lastSeenUs: 100 }), 100), false, 'the next walk finds it again');
  assert.equal(log.dropped, 1, 'counted once');
  assert.equal(log.size, 2);
  // The walk at 200 µs found 11 again but not 10: 10 ended, and makes room for 12 at the next walk.
  log.get(11, 1)!.lastSeenUs = 200;
  assert.ok(log.add(record(12, 1, { lastSeenUs: 200 }), 200));
  assert.equal(log.dropped, 0, 'kept after all');
  assert.deepEqual(
    log.all().map((r) => r.pid),
    [11, 12],
  );
  assert.equal(log.get(10, 1), null);
  assert.equal(log.find(10, null), null);
  assert.equal(log.find(12, null)?.pid, 12);
});
