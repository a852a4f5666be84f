import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import WebSocket from 'ws';

import { listProcesses } from '../../main/process/process-state';
import { discoverLibraries } from '../../main/services/discovery-service';
import { parseJson, runCli } from '../helpers/cli';
import { startServe, type ServeProcess } from '../helpers/serve';

// `gpu-workbench monitor` and the monitor channels where there is no NVML (CI): a clear refusal with exit 2
// before any command is started, and bad command lines or requests refused before anything runs.
const hasNvml = discoverLibraries().nvml.loaded;
const work = mkdtempSync(join(tmpdir(), 'wb-monitor-'));
const noStack = (text: string) => assert.doesNotMatch(text, /\n\s+at .+[:(].*\d+:\d+\)?/, 'no stack trace');
/** A command that leaves a mark the moment it starts, and would then run for a while. */
const marking = (name: string) => ['--', '/bin/sh', '-c', `touch ${join(work, name)}; exec sleep 30`];
const leftRunning = (name: string) => listProcesses().filter((p) => p.cmdline.includes(join(work, name)));
/** A pid no process has: one that just exited. */
const deadPid = () => spawnSync('/bin/true').pid!;

test(
  'without NVML, monitor -- <command> refuses before starting it: exit 2, what to do, the command never ran',
  { skip: hasNvml && 'this machine has NVML' },
  async () => {
    const r = await runCli(['monitor', ...marking('ran')]);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /✗ NVML was not found, so there is nothing to monitor/);
    assert.match(r.stderr, /What to do: Monitoring needs a machine with the NVIDIA driver/);
    assert.match(r.stderr, /searched libnvidia-ml\.so\.1 \(loader path\)/);
    noStack(r.stdout + r.stderr);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(existsSync(join(work, 'ran')), false, 'the command was started');
    assert.deepEqual(leftRunning('ran'), []);
  },
);

test(
  'without NVML, monitor --json answers the problem as JSON, exit 2; the whole device and --pid alike',
  { skip: hasNvml && 'this machine has NVML' },
  async () => {
    for (const args of [
      ['monitor', '--json'],
      ['monitor', '--json', '--pid', String(process.pid)],
      ['monitor', '--json', '--duration', '1'],
    ]) {
      const r = await runCli(args);
      assert.equal(r.code, 2, args.join(' '));
      const out = parseJson<{ ok: boolean; problem: { title: string; remedy: string; searched: string[] } }>(r);
      assert.equal(out.ok, false);
      assert.match(out.problem.title, /NVML was not found/);
      assert.ok(out.problem.searched.length > 0);
    }
  },
);

test('bad command lines: one clear message each, exit 64, and nothing started', async () => {
  const script = join(work, 'not-executable.sh');
  mkdirSync(join(work, 'a-folder'));
  spawnSync('/bin/sh', ['-c', `echo 'exit 0' > ${script}`]);
  const cases: [string[], RegExp][] = [
    [['monitor', '--interval', '5'], /--interval must be between 10 and 60000/],
    [['monitor', '--interval', '1.5'], /--interval must be a whole number/],
    [['monitor', '--interval', '60001'], /--interval must be between 10 and 60000/],
    [['monitor', '--duration', '0'], /--duration is seconds, more than 0/],
    [['monitor', '--duration', '-3'], /--duration is seconds|unknown option/],
    [['monitor', '--duration', '1e9'], /--duration is seconds/],
    [['monitor', '--pid', '0'], /--pid must be between 1/],
    [['monitor', '--pid', 'me'], /--pid must be a whole number/],
    [['monitor', '--pid', String(deadPid())], /No process with PID \d+ is running here/],
    [['monitor', '--pid', String(process.pid), ...marking('both')], /Give --pid or a command after --, not both/],
    [['monitor', 'sleep', '1'], /Put the command to monitor after --: gpu-workbench monitor -- sleep 1/],
    [['monitor', '--'], /Nothing after --/],
    [['monitor', '--', 'no-such-program-here'], /no-such-program-here was not found on PATH/],
    [['monitor', '--', script], /is not an executable file/],
    [['monitor', '--', join(work, 'a-folder')], /is not an executable file/],
    [['monitor', '--samples'], /--samples goes with --json/],
    [['monitor', '--no-processes', '--process-interval', '100'], /contradict/],
    [['monitor', '--interval', '100', '--process-interval', '50'], /cannot be shorter than --interval/],
    [['monitor', '--csv', join(work, 'no/such/folder/x.csv'), ...marking('csv')], /--csv .*: the folder .* does not exist/],
    [['monitor', '--csv', join(work, 'a-folder'), ...marking('csv')], /is a folder; give a file name/],
    [['monitor', '--trace', join(work, 'no/such/folder/t.json'), ...marking('csv')], /--trace .*: the folder .* does not exist/],
    [['monitor', '--frobnicate'], /unknown option/],
  ];
  for (const [args, message] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, 64, `${args.join(' ')}\n${r.stdout}${r.stderr}`);
    assert.match(r.stdout + r.stderr, message, args.join(' '));
    noStack(r.stdout + r.stderr);
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  for (const name of ['both', 'csv']) {
    assert.equal(existsSync(join(work, name)), false, `${name}: a command was started`);
    assert.deepEqual(leftRunning(name), []);
  }
});

let serve: ServeProcess;
before(async () => {
  serve = await startServe({ GPU_WORKBENCH_STATE_DIR: join(work, 'state'), GPU_WORKBENCH_CACHE_DIR: join(work, 'cache') });
});
after(() => serve.stop());

async function call(channel: string, request: unknown): Promise<{ ok: boolean; value?: unknown; error?: { code: string; message: string } }> {
  const ws = new WebSocket(`ws://127.0.0.1:${serve.port}/api?token=${serve.token}`, { origin: `http://127.0.0.1:${serve.port}` });
  await new Promise((resolve, reject) => {
    ws.on('open', resolve);
    ws.on('error', reject);
  });
  try {
    return await new Promise((resolve) => {
      ws.on('message', (data) => {
        const m = JSON.parse(String(data)) as { id: number; envelope?: { ok: boolean; value?: unknown; error?: { code: string; message: string } } };
        if (m.id === 1 && m.envelope) resolve(m.envelope);
      });
      ws.send(JSON.stringify({ id: 1, channel, request }));
    });
  } finally {
    ws.close();
  }
}

test('monitor.start: a request cannot name a program; bad intervals and pids are refused; without NVML it says what to do', async () => {
  const command = await call('monitor.start', { intervalMs: 100, command: ['/bin/sh', '-c', `touch ${join(work, 'channel')}`] });
  assert.equal(command.ok, false);
  assert.equal(command.error!.code, 'BAD_REQUEST');
  for (const request of [
    { intervalMs: 5 },
    { intervalMs: 100, durationS: 0 },
    { intervalMs: 100, pid: -1 },
    { id: '../x' },
    { intervalMs: 100, durationS: 1e9 },
  ]) {
    const r = await call('monitor.start', request);
    assert.equal(r.error?.code, 'BAD_REQUEST', JSON.stringify(request));
  }
  const dead = await call('monitor.start', { intervalMs: 100, pid: deadPid() });
  assert.equal(dead.error?.code, 'NO_SUCH_PROCESS');
  assert.deepEqual(await call('monitor.stop', { id: 'nothing-runs' }), { ok: true, value: { stopped: false } });
  if (!hasNvml) {
    const r = await call('monitor.start', { intervalMs: 100, durationS: 1 });
    assert.equal(r.error?.code, 'NO_NVML');
    assert.match(r.error!.message, /NVML was not found.*What to do: Monitoring needs a machine with the NVIDIA driver/s);
  }
  assert.equal(existsSync(join(work, 'channel')), false);
});
