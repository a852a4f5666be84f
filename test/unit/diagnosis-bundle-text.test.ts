import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  bundleDiagnosisNote,
  bundleDiagnosisText,
  bundleSnapshotName,
  diagnosisBundleName,
  diagnosisExportBlocker,
  diagnosisExportedText,
  diagnosisExportFailedText,
  diagnosisExportAbout,
  diagnosisRanHere,
  DIAGNOSIS_REDACT_LABEL,
} from '../../core/diagnose/diagnosis-bundle-text';
import { reportOriginText } from '../../core/diagnose/diagnosis-view-text';
import type { DiagnosisReport } from '../../core/diagnose/report';

const ROOT = join(__dirname, '../../..');
const oom = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/diagnoses/pytorch-oom-too-large.json'), 'utf8')) as DiagnosisReport;
const program = (argv: string[]) => ({ program: { argv, cwd: '/w', envChanges: {}, thorough: false } });
const AT = new Date('2026-05-01T09:30:41.123Z');

test('Export bundle… is offered for a report the host holds, and said off in words for one it does not', () => {
  assert.equal(diagnosisExportBlocker({ id: 'a1b2' }, { kind: 'run' }), null);
  assert.equal(diagnosisExportBlocker({ id: 'a1b2' }, { kind: 'file', path: '/r/a.json' }), null);
  assert.match(diagnosisExportBlocker({}, { kind: 'cancelled' })!, /^This cancelled diagnosis was built from what streamed .*then export\.$/);
  // The host's own answer to the cancel is held: it exports as any other.
  assert.equal(diagnosisExportBlocker({ id: 'h' }, { kind: 'cancelled' }), null);
  assert.equal(
    diagnosisExportBlocker({}, { kind: 'bundle', path: '/home/me/in/oom.zip' }),
    'This diagnosis came from the bundle oom.zip, which is already the one file to send: send it as it is.',
  );
  assert.match(diagnosisExportBlocker({}, { kind: 'file', path: '/r/a.json' })!, /open or run it again, then export\.$/);
  assert.match(diagnosisExportBlocker({}, null)!, /holds no copy of this diagnosis/);
});

test('the proposed file name: the script a Python program runs, else its command, and the minute it is written', () => {
  assert.equal(diagnosisBundleName(oom, AT), 'gpu-workbench-diagnosis-join-2026-05-01T09-30.zip');
  assert.equal(
    diagnosisBundleName(program(['/usr/bin/python3.12', 'src/train model.py', '--epochs', '1']), AT),
    'gpu-workbench-diagnosis-train-model-2026-05-01T09-30.zip',
  );
  assert.equal(diagnosisBundleName(program(['python3', '-m', 'pkg']), AT), 'gpu-workbench-diagnosis-python3-2026-05-01T09-30.zip');
  assert.equal(diagnosisBundleName(program(['./build/a.out']), AT), 'gpu-workbench-diagnosis-a.out-2026-05-01T09-30.zip');
  assert.equal(diagnosisBundleName(program(['...']), AT), 'gpu-workbench-diagnosis-program-2026-05-01T09-30.zip');
  assert.equal(diagnosisBundleName(program(['x'.repeat(100)]), AT), `gpu-workbench-diagnosis-${'x'.repeat(40)}-2026-05-01T09-30.zip`);
  assert.equal(diagnosisBundleName(program([]), new Date(NaN)), 'gpu-workbench-diagnosis-program-now.zip');
});

test('what the export says: written (where, how big, redacted or not), refused in the host’s words, or cancelled', () => {
  assert.equal(
    diagnosisExportedText({ path: '/tmp/d.zip', bytes: 2_345_678 }, true),
    'Wrote /tmp/d.zip (2.24 MiB, redacted). Send it as it is: Open bundle… opens it, and Open in Diagnose there shows this report.',
  );
  assert.match(diagnosisExportedText({ path: '/tmp/d.zip', bytes: 10 }, false), /\(10 B, NOT redacted\)/);
  assert.equal(
    diagnosisExportFailedText('The bundle was not written to /nope/d.zip: its folder does not exist. Nothing was left behind.', {
      cancelled: false,
      path: '/nope/d.zip',
    }),
    'The diagnosis was not exported. The bundle was not written to /nope/d.zip: its folder does not exist. Nothing was left behind.',
  );
  assert.equal(diagnosisExportFailedText('socket closed', { cancelled: false, path: '/t/d.zip' }), 'The diagnosis was not exported. socket closed.');
  assert.equal(diagnosisExportFailedText(' ', { cancelled: false, path: '/t/d.zip' }), 'The diagnosis was not exported. the workbench gave no reason.');
  assert.equal(diagnosisExportFailedText('aborted', { cancelled: true, path: '/t/d.zip' }), 'Cancelled: nothing was written to /t/d.zip.');
  assert.match(diagnosisExportAbout(true), /allocator’s snapshot when one was recorded — and this machine’s doctor and CUDA variables.*Open bundle…/);
  // One opened from a file goes without this machine's doctor (the host leaves it out): the dialog does not promise it.
  assert.doesNotMatch(diagnosisExportAbout(false), /doctor and CUDA variables, for/);
  assert.match(diagnosisExportAbout(false), /This machine’s doctor and variables stay out: the diagnosis was recorded elsewhere/);
  assert.deepEqual(
    (['run', 'cancelled', 'file', 'bundle'] as const).map((kind) => diagnosisRanHere(kind === 'file' || kind === 'bundle' ? { kind, path: '/x' } : { kind })),
    [true, true, false, false],
  );
  assert.equal(DIAGNOSIS_REDACT_LABEL, 'Hide user and host names, home folders and your own variables');
});

test('a bundle that holds a diagnosis: its verdict, what Open in Diagnose does, the snapshot’s name, the report’s origin', () => {
  assert.equal(bundleDiagnosisText(oom), `It holds a program’s diagnosis: ${oom.verdict.sentence}`);
  assert.match(bundleDiagnosisText(oom), /^It holds a program’s diagnosis: Out of GPU memory at join\.py:20/);
  assert.match(bundleDiagnosisNote(true), /nothing runs\. It carries the allocator’s snapshot .*Open in Diagnose, then Open in the Memory tab\.$/);
  assert.doesNotMatch(bundleDiagnosisNote(false), /snapshot/);
  assert.equal(bundleSnapshotName('/home/me/oom.zip'), 'the allocator’s snapshot from oom.zip');
  assert.equal(
    reportOriginText({ kind: 'bundle', path: '/home/me/oom.zip' }),
    'Opened from the bundle /home/me/oom.zip: read, never run here; the program was diagnosed where the bundle was made.',
  );
});
