import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import type { DiagnosisReport } from '../../core/diagnose/report';
import { heldBytes } from '../../main/diagnose/diagnose-handlers';
import { createHandlers, dispatch } from '../../main/host-api';
import { forkLauncher } from '../../main/process/launcher';
import { createWorkbench } from '../../main/workbench';

// A saved diagnosis is a file from outside: it is read in a child process of its own (a heap and a time limit), so
// a file built to make V8 abort costs that child, and the host answers the next request.
const dir = mkdtempSync(join(tmpdir(), 'wb-diagnose-hostile-'));
process.env['GPU_WORKBENCH_STATE_DIR'] = join(dir, 'state');
const workbench = createWorkbench(forkLauncher, { warmSpare: false });
const handlers = createHandlers(workbench, 'serve');
after(() => workbench.dispose());
type Reply = { ok: boolean; value?: unknown; error?: { code: string; message: string } };
const open = (path: string) => dispatch(handlers, 'diagnose.open', { path }) as Promise<Reply>;

test('hostile saved diagnoses are refused in words, and the host goes on', async () => {
  const cases: [string, string | Buffer, RegExp][] = [
    // 30 MiB of nesting (JSON.parse would build 15 million arrays) and 15 million numbers: counted, never parsed.
    ['nested.json', '['.repeat(15 * 2 ** 20) + ']'.repeat(15 * 2 ** 20), /nests arrays and objects 33 deep at byte 32, over the limit of 32/],
    ['numbers.json', `[${'0,'.repeat(15 * 2 ** 20)}0]`, /holds more than 2,000,000 values/],
    ['too-big.json', Buffer.alloc(33 * 2 ** 20, 0x20), /could not be read|larger than/],
    ['shape.json', JSON.stringify({ schema: 1, verdict: { kind: 'clean', sentence: 'trust me' } }), /not a diagnosis report \(/],
    ['text.json', 'not json at all', /is not valid JSON/],
  ];
  for (const [name, data, expected] of cases) {
    writeFileSync(join(dir, name), data);
    const reply = await open(join(dir, name));
    assert.equal(reply.ok, false, name);
    assert.match(reply.error!.message, expected, `${name}: ${reply.error!.message}`);
    assert.equal(reply.error!.code, 'FILE', name);
  }
  execFileSync('mkfifo', [join(dir, 'fifo.json')]);
  const fifo = await open(join(dir, 'fifo.json'));
  assert.equal(fifo.ok, false);
  assert.match(fifo.error!.message, /could not be read/);
  const info = (await dispatch(handlers, 'app.info', {})) as Reply;
  assert.ok(info.ok, 'the host still answers');
});

test('a saved diagnosis opened again and again is held by its whole size: its command lines count, and the oldest goes', async () => {
  // Little output, 950 command lines of 24 KB each: 23 MB that reports measured by their outputs once counted as 64 KiB.
  const report = JSON.parse(readFileSync(join(__dirname, '../../../test/fixtures/diagnoses/pytorch-oom-too-large.json'), 'utf8')) as DiagnosisReport;
  const run = report.evidence.runs[0]!;
  run.processes = Array.from({ length: 950 }, (_, i) => ({
    pid: 1000 + i,
    command: `python3 ${'x'.repeat(24 * 1024)}`,
    peakBytes: 1,
    isProgram: false,
    childOfProgram: true,
  }));
  const file = join(dir, 'many-commands.json');
  writeFileSync(file, JSON.stringify(report));
  assert.ok(heldBytes(report) > 40 * 2 ** 20, `measured whole: ${heldBytes(report)}`);
  const ids: string[] = [];
  for (let i = 0; i < 8; i++) {
    const reply = await open(file);
    assert.ok(reply.ok, reply.error?.message);
    ids.push((reply.value as DiagnosisReport).id!);
  }
  const exported = (id: string) => dispatch(handlers, 'diagnose.export', { id, path: join(dir, `out-${id}.zip`) }) as Promise<Reply>;
  const first = await exported(ids[0]!);
  assert.equal(first.ok, false, 'eight 44 MiB reports do not fit in the 256 MiB held: the first is gone');
  assert.match(first.error!.message, /no longer held/);
  const last = await exported(ids.at(-1)!);
  assert.ok(last.ok, last.error?.message);
});
