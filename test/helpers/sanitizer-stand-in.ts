import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT } from './cli';

const FIXTURES = join(ROOT, 'test/fixtures/sanitizer/h100');

/**
 * A stand-in for compute-sanitizer's process, for tests of how the workbench handles runs under the tool (not
 * of the tool): a program named "slow.py" runs until stopped; anything else replays what the real tool saved
 * and printed on an H100 for `replay` (an XML report in test/fixtures/sanitizer/h100 and its .txt), exiting
 * with `exitCode`. Every program it was asked to run is appended to `started`.
 */
export function sanitizerStandIn(dir: string, replay: string, exitCode: number): { tool: string; started: string } {
  const started = join(dir, 'started.log');
  const tool = join(dir, 'compute-sanitizer');
  writeFileSync(
    tool,
    `#!/bin/bash
if [ "$1" = --version ]; then echo 'Version 2025.3.1.0 (build 36400806) (public-release)'; exit 0; fi
save=''; prev=''
for a in "$@"; do [ "$prev" = --save ] && save=$a; prev=$a; done
echo "\${@: -1}" >> '${started}'
case "\${@: -1}" in
  slow.py) sleep 60 & wait ;;
  *) cp '${join(FIXTURES, `${replay}.xml`)}' "\${save//%p/$$}"; grep -v '^exit [0-9]* in [0-9]* ms$' '${join(FIXTURES, `${replay}.xml.txt`)}'; exit ${exitCode} ;;
esac
`,
  );
  chmodSync(tool, 0o755);
  writeFileSync(started, '');
  return { tool, started };
}
