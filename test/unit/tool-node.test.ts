import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { noCountersMessage } from '../../core/kernel-profile/no-counters';
import { NO_TOOL_NODE, toolTargetNode } from '../../main/process/tool-node';

// The Node.js a tool starts the workbench's runner with: under Electron not the app's own binary (it does not run as Node).
const dir = mkdtempSync(join(tmpdir(), 'wb-tool-node-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const electron = { ...process.versions, electron: '45.5.0' } as NodeJS.ProcessVersions;

function binDir(name: string, executable: boolean): string {
  const bin = join(dir, name);
  mkdirSync(bin);
  writeFileSync(join(bin, 'node'), '#!/bin/sh\n');
  chmodSync(join(bin, 'node'), executable ? 0o755 : 0o644);
  return bin;
}

test('under Node the tool starts this process’s own binary, whatever PATH says', () => {
  assert.deepEqual(toolTargetNode({ PATH: '' }, process.versions, '/opt/node/bin/node'), { path: '/opt/node/bin/node' });
});

test('under Electron: GPU_WORKBENCH_NODE when it names an executable by its full path, else the first node on PATH', () => {
  const found = binDir('found', true);
  const notExecutable = binDir('not-executable', false);
  assert.deepEqual(toolTargetNode({ GPU_WORKBENCH_NODE: process.execPath, PATH: found }, electron, '/app/gpu-workbench'), { path: process.execPath });
  const path = ['relative/bin', notExecutable, join(dir, 'missing'), found].join(':');
  assert.deepEqual(toolTargetNode({ PATH: path }, electron, '/app/gpu-workbench'), { path: join(found, 'node') });
  for (const given of ['node', join(notExecutable, 'node'), dir]) {
    const answer = toolTargetNode({ GPU_WORKBENCH_NODE: given, PATH: found }, electron, '/app/gpu-workbench');
    assert.ok('problem' in answer && answer.problem.startsWith(`GPU_WORKBENCH_NODE is ${given}, which is not an executable file`), given);
  }
  assert.deepEqual(toolTargetNode({ PATH: `relative:${notExecutable}` }, electron, '/app/gpu-workbench'), { problem: NO_TOOL_NODE });
  assert.deepEqual(toolTargetNode({}, electron, '/app/gpu-workbench'), { problem: NO_TOOL_NODE });
});

test('a profile without a Node.js for the tool says so, what to do, and what it still gives', () => {
  const { headline, body } = noCountersMessage('no-node', NO_TOOL_NODE, 'transpose');
  assert.equal(headline, 'No hardware counters: no Node.js was found to run the plan under Nsight Compute');
  assert.match(body, /install Node\.js 20\.17 or later, or set GPU_WORKBENCH_NODE/);
  assert.match(body, /Still given below/);
});
