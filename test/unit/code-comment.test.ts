import assert from 'node:assert/strict';
import { test } from 'node:test';

import { withoutTrailingComment } from '../../core/text/code-comment';
import { placeText } from '../../core/diagnose/verdict';

test('a quoted line loses its trailing comment, never a # or // inside a string', () => {
  const cases: [string, string, string][] = [
    ['join.py', 'joined = torch.cat([first, second])  # needs 80% more while both inputs are alive', 'joined = torch.cat([first, second])'],
    ['a.py', "print('# not a comment')  # a comment", "print('# not a comment')"],
    ['a.py', 'x = "a \\" # still a string" # gone', 'x = "a \\" # still a string"'],
    ['a.py', '# all comment', '# all comment'],
    ['a.py', 'x = 1', 'x = 1'],
    ['k.cu', 'out[i] = in[i] * s;  // the scale', 'out[i] = in[i] * s;'],
    ['k.cu', 'printf("http://x\\n"); // url', 'printf("http://x\\n");'],
    ['notes.txt', 'a # b', 'a # b'],
  ];
  for (const [file, code, kept] of cases) assert.equal(withoutTrailingComment(file, code), kept, `${file}: ${code}`);
});

test('the verdict quotes the line as code, and the comment stays with the line shown beside it', () => {
  const place = { file: '/w/join.py', line: 20, code: 'joined = torch.cat([first, second])  # needs 80% more while both inputs are alive', function: null };
  assert.equal(placeText(place), 'join.py:20 (joined = torch.cat([first, second]))');
});
