import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseEnvironmentLines, splitCommandLine } from '../../core/text/split-command';

const argv = (line: string) => {
  const r = splitCommandLine(line);
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.argv;
};

test('words as a shell splits them, with nothing expanded', () => {
  assert.deepEqual(argv('python3 train.py --epochs 2'), ['python3', 'train.py', '--epochs', '2']);
  assert.deepEqual(argv(`  python3   'my script.py'  "a \\"b\\" c" x\\ y  `), ['python3', 'my script.py', 'a "b" c', 'x y']);
  assert.deepEqual(argv(`echo '$(rm -rf /)' "$HOME" \`id\``), ['echo', '$(rm -rf /)', '$HOME', '`id`']);
  assert.deepEqual(argv(`a''b "" ''`), ['ab', '', '']);
});

test('unclosed quotes, a trailing backslash and an empty line are refused in words', () => {
  assert.match((splitCommandLine(`python3 'x.py`) as { error: string }).error, /' at position 9 is never closed/);
  assert.match((splitCommandLine(`python3 "x.py`) as { error: string }).error, /" at position 9 is never closed/);
  assert.match((splitCommandLine('python3 x\\') as { error: string }).error, /ends in a \\/);
  assert.match((splitCommandLine('   ') as { error: string }).error, /Type the program/);
});

test('environment lines: NAME=value, comments and blanks skipped, anything else named by its line', () => {
  assert.deepEqual(parseEnvironmentLines('# pools hide overruns\nPYTORCH_NO_CUDA_MEMORY_CACHING=1\n\nCUDA_VISIBLE_DEVICES=0'), {
    ok: true,
    env: { PYTORCH_NO_CUDA_MEMORY_CACHING: '1', CUDA_VISIBLE_DEVICES: '0' },
  });
  assert.deepEqual(parseEnvironmentLines('A=1\n1B=2'), { ok: false, error: 'Line 2 is not NAME=value (a name of letters, digits and _): "1B=2".' });
});
