import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { noCountersMessage } from '../../core/kernel-profile/no-counters';
import { outsideAsar } from '../../main/paths';
import { judgeToolNode, NO_TOOL_NODE, toolTargetNode } from '../../main/process/tool-node';
import { ROOT } from '../helpers/cli';

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
  const itself = toolTargetNode({ GPU_WORKBENCH_NODE: process.execPath, PATH: found }, electron, process.execPath);
  assert.ok('problem' in itself && itself.problem.startsWith('GPU_WORKBENCH_NODE names the app itself'), 'the app binary is no Node.js under Electron');
  assert.deepEqual(toolTargetNode({}, electron, '/app/gpu-workbench'), { problem: NO_TOOL_NODE });
});

test('a profile without a Node.js for the tool says so, what to do, and what it still gives', () => {
  const { headline, body } = noCountersMessage('no-node', NO_TOOL_NODE, 'transpose');
  assert.equal(headline, 'No hardware counters: no usable Node.js to run the plan under Nsight Compute');
  assert.match(body, /install Node\.js 20\.17 or later, or set GPU_WORKBENCH_NODE/);
  assert.match(body, /Still given below/);
});

test('a runner a tool starts under a real Node.js opens the unpacked copies of the packaged app’s files, and they are unpacked', () => {
  const packaged = '/opt/GPU Workbench/resources/app.asar/dist/main/runner.js';
  assert.equal(outsideAsar(packaged, electron), '/opt/GPU Workbench/resources/app.asar.unpacked/dist/main/runner.js');
  assert.equal(
    outsideAsar('/srv/app.asar/resources/app.asar/dist/main/runner.js', electron),
    '/srv/app.asar/resources/app.asar.unpacked/dist/main/runner.js',
    'the archive is the last such folder',
  );
  assert.equal(outsideAsar('/work/gpu-workbench/dist/main/runner.js', electron), '/work/gpu-workbench/dist/main/runner.js', 'a checkout: as it is');
  assert.equal(outsideAsar('/x/app.asar.unpacked/dist/main/runner.js', electron), '/x/app.asar.unpacked/dist/main/runner.js', 'already outside');
  assert.equal(outsideAsar('/srv/app.asar/dist/main/runner.js', process.versions), '/srv/app.asar/dist/main/runner.js', 'under Node, never');
  // What that runner reads: its entry, the code-cache loader and the bundle it loads, package.json (its root), the addon.
  const entry = readFileSync(join(ROOT, 'dist/main/runner.js'), 'utf8');
  assert.match(entry, /require\('\.\/boot\.js'\)/);
  assert.match(entry, /'runner\.impl\.js'/);
  const builder = readFileSync(join(ROOT, 'electron-builder.yml'), 'utf8');
  const unpacked = [...builder.slice(builder.indexOf('\nasarUnpack:')).matchAll(/^ {2}- (.+)$/gm)].map((m) => m[1]!.trim());
  const matches = (file: string) => unpacked.some((p) => new RegExp(`^${p.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}$`).test(file));
  for (const file of ['dist/main/runner.js', 'dist/main/boot.js', 'dist/main/runner.impl.js', 'package.json', 'native/build/Release/gpu_workbench_native.node'])
    assert.ok(matches(file), `${file} is unpacked`);
});

test('a Node.js found outside the app is used only if it is 20.17 or later, and one that does not say its version is not', () => {
  for (const version of ['20.17.0', '20.18.0', '21.0.0', '22.1.0', '24.11.1'])
    assert.deepEqual(judgeToolNode('/usr/bin/node', version), { path: '/usr/bin/node' }, version);
  for (const version of ['20.16.9', '18.19.1', '12.22.9', '20.9.0']) {
    const answer = judgeToolNode('/usr/bin/node', version);
    assert.ok(
      'problem' in answer &&
        answer.problem ===
          `/usr/bin/node is Node.js ${version}, and the runner needs 20.17.0 or later: install a newer one, or set GPU_WORKBENCH_NODE to its full path.`,
      version,
    );
  }
  const silent = judgeToolNode('/usr/bin/node', null);
  assert.ok('problem' in silent && silent.problem.startsWith('/usr/bin/node did not say its version when asked'));
});
