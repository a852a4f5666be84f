import assert from 'node:assert/strict';
import { test } from 'node:test';

import { bundleEnvironment, makeRedactor, NO_REDACTION } from '../../core/bundle/redact';

const facts = { userNames: ['alice'], hostNames: ['gpu-box7.lab.example.org'], homeDirs: ['/home/alice/'], gpuSerials: ['1652020012345'] };

test('home folders become ~, other homes lose their user name, user and host names become placeholders', () => {
  const r = makeRedactor(facts);
  assert.equal(r.text('/home/alice/src/kernel.cu:12: error'), '~/src/kernel.cu:12: error');
  assert.equal(r.text('HOME=/home/alice'), 'HOME=~');
  assert.equal(r.text('/home/alicesmith/x'), '/home/<user>/x', 'a longer name is not this home, but is still a home');
  assert.equal(r.text('LD_LIBRARY_PATH=/opt/cuda/lib64:/home/bob/lib'), 'LD_LIBRARY_PATH=/opt/cuda/lib64:/home/<user>/lib');
  assert.equal(r.text('alice@gpu-box7.lab.example.org ran it on gpu-box7'), '<user>@<host> ran it on <host>');
  assert.equal(r.text('Alice wrote malice'), '<user> wrote malice', 'whole words only, any case');
});

test('GPU UUIDs get stable placeholders in order of first appearance; serials are hidden in text and in serial fields', () => {
  const r = makeRedactor(facts);
  const a = 'GPU-5e7f6a2b-1c3d-4e5f-8a9b-0c1d2e3f4a5b';
  const b = 'GPU-00000000-1111-2222-3333-444444444444';
  assert.equal(r.text(`${a} ${b} ${a.toUpperCase().replace('GPU', 'GPU')}`), 'GPU-0 GPU-1 GPU-0');
  assert.equal(r.text('MIG-5e7f6a2b-1c3d-4e5f-8a9b-0c1d2e3f4a5c'), 'MIG-2');
  assert.equal(r.text('Serial Number : 1652020012345'), 'Serial Number : SERIAL-0');
  assert.deepEqual(r.json({ devices: [{ uuid: a, serial: '99887766', name: 'NVIDIA H100', path: '/home/alice/p.json' }] }), {
    devices: [{ uuid: 'GPU-0', serial: 'SERIAL-1', name: 'NVIDIA H100', path: '~/p.json' }],
  });
});

test('the environment is an allow-list, redacted; --no-redact keeps values as they are', () => {
  const env = { LD_LIBRARY_PATH: '/home/alice/cuda/lib64', CUDA_VISIBLE_DEVICES: '1', SECRET_TOKEN: 'x', USER: 'alice', HOSTNAME: 'gpu-box7' };
  assert.deepEqual(bundleEnvironment(env, makeRedactor(facts)), { CUDA_VISIBLE_DEVICES: '1', LD_LIBRARY_PATH: '~/cuda/lib64' });
  assert.deepEqual(bundleEnvironment(env, NO_REDACTION), { CUDA_VISIBLE_DEVICES: '1', LD_LIBRARY_PATH: '/home/alice/cuda/lib64' });
  assert.equal(NO_REDACTION.text('/home/alice'), '/home/alice');
});

test('names too short or generic to hide safely are left alone', () => {
  const r = makeRedactor({ userNames: ['a'], hostNames: ['localhost'], homeDirs: ['/'] });
  assert.equal(r.text('a localhost /usr/a'), 'a localhost /usr/a');
});

test('code keeps its words: a user called root and a kernel with a variable called root', () => {
  const r = makeRedactor({ homeDirs: ['/root'], userNames: ['root'], hostNames: ['gpu-box'], gpuSerials: [] });
  const source = '// the square root, from /root/data/in.bin\n__global__ void k(float* root) { root[0] = sqrtf(root[0]); }\n';
  assert.equal(r.code(source), '// the square root, from ~/data/in.bin\n__global__ void k(float* root) { root[0] = sqrtf(root[0]); }\n');
  assert.equal(r.text('user root on gpu-box'), 'user <user> on <host>');
});

test('a home folder is one only where a path begins: inside another path its name is the user’s, as elsewhere', () => {
  const r = makeRedactor({ homeDirs: ['/root'], userNames: ['root'], hostNames: [], gpuSerials: [] });
  assert.equal(r.text('/scratch/root/proj/train.py'), '/scratch/<user>/proj/train.py');
  assert.equal(r.code('/scratch/root/proj/train.py'), '/scratch/root/proj/train.py', 'code leaves the word: no home is there');
  for (const [given, shown] of [
    ['/root/proj/train.py', '~/proj/train.py'],
    ['File "/root/x.py", line 3', 'File "~/x.py", line 3'],
    ['PATH=/usr/bin:/root/bin', 'PATH=/usr/bin:~/bin'],
    ['--out=/root', '--out=~'],
    ['file:///root/report.html', 'file://~/report.html'],
    ['nvcc -I/root/inc -L/root/lib', 'nvcc -I~/inc -L~/lib'],
    ['\x1b[1m/root/x.py\x1b[0m', '\x1b[1m~/x.py\x1b[0m'],
    ['line one\\n/root/x.py', 'line one\\n~/x.py'],
    ['[/root] `/root` {/root} </root>', '[~] `~` {~} <~>'],
    ['it ran in /root.', 'it ran in ~.'],
    ['/root.bak/x /root2/x /root-old/x', '/root.bak/x /root2/x /root-old/x'],
  ] as const)
    assert.equal(r.code(given), shown, given);
});
