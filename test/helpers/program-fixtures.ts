import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { EnvironmentEvidence, Evidence, ExitStatus, RunEvidence, RunKind } from '../../core/diagnose/evidence';
import { readFailure } from '../../core/diagnose/read-failure';

export const PROGRAM_FIXTURES = join(__dirname, '../../../test/fixtures/programs/h200');

/** A recorded run: its output and the "exit N in M ms" line the recording script appended. */
export function recordedRun(name: string, kind: RunKind = 'as-is', envChanges: Record<string, string> = {}): RunEvidence {
  const text = readFileSync(join(PROGRAM_FIXTURES, `${name}.txt`), 'utf8');
  const m = /exit (\d+) in (\d+) ms\n$/.exec(text)!;
  const code = Number(m[1]);
  // The recordings ran through `timeout`, which reports a death by signal as 128 + n.
  const exit: ExitStatus = { code, signal: null, outOfBudget: false, cancelled: false };
  const output = text.slice(0, m.index);
  return {
    kind,
    argv: ['python3', `${name.split('.')[0]}.py`],
    envChanges,
    exit,
    durationMs: Number(m[2]),
    output,
    outputDroppedBytes: 0,
    failure: readFailure(output, exit),
    sanitizer: null,
    oomPicture: null,
    processes: null,
    memory: null,
    watchProblems: [],
  };
}

export const H200_GPUS: EnvironmentEvidence['gpus'] = [{ index: 0, name: 'NVIDIA H200', totalBytes: 150754820096, usedBytes: 644939776 }];

export function evidenceOf(runs: RunEvidence[], extra: Partial<Evidence> = {}): Evidence {
  return {
    argv: runs[0]?.argv ?? ['python3', 'x.py'],
    python: true,
    thorough: false,
    environment: { checks: [], gpus: H200_GPUS, driver: { version: '580.159.04', cuda: '13.0' }, python: null, processes: [], problems: [] },
    runs,
    notRun: [],
    ...extra,
  };
}

/** Where the repository was when the sanitizer reports were recorded; their host frames name files under it. */
const RECORDED_ROOT = '/work/main/';

/**
 * A recorded report's text with the recording's repository path replaced by this checkout's, so its frames name
 * the samples here (CI clones elsewhere, and a stale copy at the recorded path must not answer for them).
 */
export function relocatedRecording(path: string): string {
  return readFileSync(path, 'utf8').replaceAll(RECORDED_ROOT, `${join(__dirname, '../../..')}/`);
}
