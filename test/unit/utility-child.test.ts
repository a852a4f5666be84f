import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';

import { killWhenSpawned, v8FlagsForUtility } from '../../main/electron/utility-child';

// The utility launcher's options and kill, without Electron (main/electron/utility-child.ts).

test("V8's flags reach a utility process as one --js-flags switch; none, no switch", () => {
  assert.deepEqual(v8FlagsForUtility(['--max-old-space-size=2048', '--stack-size=2048']), ['--js-flags=--max-old-space-size=2048 --stack-size=2048']);
  assert.deepEqual(v8FlagsForUtility([]), []);
});

/** A utility child as Electron makes one: no pid until 'spawn'. */
class Child extends EventEmitter {
  pid: number | undefined;
  spawn(pid: number): void {
    this.pid = pid;
    this.emit('spawn');
  }
}

test('a kill asked before the child has a pid is sent once it spawns, the strongest of those asked; after, at once', () => {
  const sent: [number, NodeJS.Signals][] = [];
  const child = new Child();
  const kill = killWhenSpawned(child, (pid, signal) => sent.push([pid, signal]));
  kill('SIGTERM');
  kill('SIGKILL');
  kill('SIGTERM');
  assert.deepEqual(sent, [], 'nothing to signal yet');
  child.spawn(4242);
  assert.deepEqual(sent, [[4242, 'SIGKILL']]);
  kill('SIGTERM');
  assert.deepEqual(sent, [
    [4242, 'SIGKILL'],
    [4242, 'SIGTERM'],
  ]);

  const calm: [number, NodeJS.Signals][] = [];
  const other = new Child();
  killWhenSpawned(other, (pid, signal) => calm.push([pid, signal]));
  other.spawn(7);
  assert.deepEqual(calm, [], 'a child no one asked to stop is not signalled');
});
