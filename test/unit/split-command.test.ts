import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseEnvironmentLines, splitCommandLine } from '../../core/text/split-command';
import { andList, shellWords } from '../../core/text/shell-words';

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

test('shellWords writes any words so that splitCommandLine reads the same words back (2,000 random argvs)', () => {
  const alphabet = ['a', 'Z', '0', '-', '_', '.', '/', '=', ' ', '\t', '\n', "'", '"', '\\', '$', '`', '*', '?', '~', '#', ';', '&', '|', 'é', '日', '🙂'];
  let seed = 7;
  const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  for (let i = 0; i < 2000; i++) {
    const words = Array.from({ length: 1 + next(5) }, () => Array.from({ length: next(8) }, () => alphabet[next(alphabet.length)]!).join(''));
    assert.deepEqual(argv(shellWords(words)), words, JSON.stringify(words));
  }
  assert.equal(shellWords(['python3', 'train.py', '--lr=0.1']), 'python3 train.py --lr=0.1', 'plain words stay as they are');
  assert.equal(andList([]), '');
  assert.equal(andList(['a']), 'a');
  assert.equal(andList(['a', 'b', 'c']), 'a, b and c');
});
