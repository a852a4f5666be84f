import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { HIDDEN_VALUE, shareableDiagnosis } from '../../core/bundle/bundle-diagnosis';
import { NO_REDACTION, makeRedactor } from '../../core/bundle/redact';
import type { RunEvidence } from '../../core/diagnose/evidence';
import { pythonCommandOf } from '../../core/diagnose/python-command';
import type { DiagnosisReport } from '../../core/diagnose/report';
import { HIDDEN_SECRET, maskSecretWords } from '../../core/diagnose/secrets';
import { judge } from '../../core/diagnose/verdict-rules';
import { readFailure } from '../../core/diagnose/read-failure';
import { verdictSeverity } from '../../core/diagnose/verdict';
import { reportLines } from '../../core/diagnose/report';
import type { FindingGroup, SanitizerFinding } from '../../core/sanitizer/findings';
import { splitCommandLine } from '../../core/text/split-command';
import { judgeSanitizeRun } from '../../core/sanitizer/sanitize-report';
import { OutputStreamer, OUTPUT_TICK_MS } from '../../main/diagnose/output-streamer';
import { evidenceOf, recordedRun } from '../helpers/program-fixtures';

const ROOT = join(__dirname, '../../..');
const fixture = (name: string) => JSON.parse(readFileSync(join(ROOT, 'test/fixtures/diagnoses', `${name}.json`), 'utf8')) as DiagnosisReport;

test('the program is Python whichever way it is started, and its own Python is the one probed', () => {
  assert.deepEqual(pythonCommandOf(['python3.12', 'x.py']), ['python3.12']);
  assert.deepEqual(pythonCommandOf(['./train.py']), ['python3']);
  assert.deepEqual(pythonCommandOf(['/usr/bin/env', 'PYTHONUNBUFFERED=1', 'python3', 'x.py']), ['python3']);
  assert.deepEqual(pythonCommandOf(['uv', 'run', '--with', 'torch', 'train.py']), ['uv', 'run', '--with', 'torch', 'python']);
  assert.deepEqual(pythonCommandOf(['conda', 'run', '-n', 'ml', 'python', 'x.py']), ['conda', 'run', '-n', 'ml', 'python']);
  assert.deepEqual(pythonCommandOf(['torchrun', '--nproc-per-node', '8', 'train.py']), ['python3']);
  assert.equal(pythonCommandOf(['./a.out']), null);
  assert.equal(pythonCommandOf(['node', 'x.js']), null);
  assert.equal(pythonCommandOf([]), null);
});

test('credentials in a command line are hidden, the rest kept as typed', () => {
  assert.deepEqual(
    maskSecretWords([
      'python3',
      'serve.py',
      '--token=abc',
      '--api-key',
      'sk-0123456789abcdef',
      '--lr',
      '0.1',
      'HF_TOKEN=x',
      'hf_abcdefghijkl',
      '--auth',
      '--verbose',
    ]),
    [
      'python3',
      'serve.py',
      `--token=${HIDDEN_SECRET}`,
      '--api-key',
      HIDDEN_SECRET,
      '--lr',
      '0.1',
      `HF_TOKEN=${HIDDEN_SECRET}`,
      HIDDEN_SECRET,
      '--auth',
      '--verbose',
    ],
  );
});

test('a redacted bundle’s diagnosis: no credential, no other process’s command line, sentences made again from what is kept', () => {
  const report = fixture('pytorch-oom-other-process');
  report.program.argv = ['python3', 'hog.py', '--token=SECRET3'];
  report.evidence.runs[0]!.processes = [
    {
      pid: 4462,
      command: '/opt/torch/.venv/bin/python3 -c import torch --api-key sk-SECRET1abcdefgh cache-server',
      peakBytes: 72_000_000_000,
      isProgram: false,
      childOfProgram: true,
    },
  ];
  report.evidence.environment.processes = [{ pid: 7, command: 'python serve.py --token=SECRET2', usedBytes: 1, device: 0 }];
  report.program.envChanges = { WANDB_API_KEY: 'SECRET4', CUDA_VISIBLE_DEVICES: '0' };
  report.verdict = judge(report.evidence);
  assert.match(report.verdict.sentence, /SECRET1|cache-server/);
  const redactor = makeRedactor({ userNames: [], hostNames: [], homeDirs: [] });
  const shared = JSON.stringify(shareableDiagnosis(report, redactor, null));
  for (const secret of ['SECRET1', 'SECRET2', 'SECRET3', 'SECRET4']) assert.ok(!shared.includes(secret), secret);
  const parsed = JSON.parse(shared) as DiagnosisReport;
  assert.match(parsed.verdict.sentence, /process 4462 \(a child of the program: python3 …\)/);
  assert.equal(parsed.program.envChanges['WANDB_API_KEY'], HIDDEN_VALUE);
  assert.equal(parsed.id, undefined);
  const kept = JSON.stringify(shareableDiagnosis(report, NO_REDACTION, null));
  assert.ok(kept.includes('SECRET4') && kept.includes('SECRET3'), '--no-redact keeps what it says it keeps');
});

test('a clean run with --thorough names the passes that did not finish; it is never clean by their silence', () => {
  const clean = recordedRun('cupy-race.as-is');
  const pass = (kind: 'memcheck' | 'racecheck', outOfBudget = false): RunEvidence => ({
    ...recordedRun('cupy-race.as-is', kind),
    exit: { code: 0, signal: null, outOfBudget, cancelled: false },
    sanitizer: { verdict: outOfBudget ? 'timed-out' : 'clean', headline: '', groups: [], unavailable: null, launchLines: [] },
  });
  const v = judge(
    evidenceOf([clean, pass('memcheck'), pass('racecheck', true)], {
      thorough: true,
      notRun: [{ kind: 'initcheck', why: '', reason: 'the time budget ran out before it could start' }],
    }),
  );
  assert.equal(v.kind, 'incomplete', 'not ✓: two of the three passes did not look');
  assert.match(
    v.sentence,
    /memcheck found nothing, but not every check looked: racecheck and initcheck were stopped, or not started, when the time budget ran out\.$/,
  );
  assert.match(v.cause, /^Checked by: memcheck\. Not checked by racecheck and initcheck: what they look for is not ruled out\.$/);
  assert.deepEqual(v.whatToDo, ['Diagnose it again with a longer time budget (--budget): the sanitizer passes run the program several times slower.']);
  assert.deepEqual(verdictSeverity(v.kind), { level: 'warn', mark: '!' });
  assert.deepEqual(verdictSeverity(judge(evidenceOf([clean, pass('memcheck')], { thorough: true })).kind), { level: 'ok', mark: '✓' });
});

test('a clean exit whose memcheck could not run is shown with "!", never "✓", and the CLI report says so first', () => {
  const clean = recordedRun('cupy-race.as-is');
  const missing: RunEvidence = {
    ...recordedRun('cupy-race.as-is', 'memcheck'),
    sanitizer: { verdict: 'tool-failed', headline: '', groups: [], unavailable: 'compute-sanitizer was not found.', launchLines: [] },
  };
  const report = { ...fixture('cupy-race') };
  report.evidence = evidenceOf([clean, missing], { thorough: true });
  report.verdict = judge(report.evidence);
  assert.equal(report.verdict.kind, 'incomplete');
  const first = reportLines(report)[0]!;
  assert.match(first, /^! The program exited cleanly, but not every check looked: memcheck could not run \(compute-sanitizer was not found\)/);
});

test('passes that failed alike are said once, and the advice is the command that runs one alone, in the program’s own words', () => {
  const clean = recordedRun('cupy-race.as-is');
  const failed = (kind: 'memcheck' | 'racecheck' | 'initcheck'): RunEvidence => ({
    ...recordedRun('cupy-race.as-is', kind),
    sanitizer: { verdict: 'tool-failed', headline: '', groups: [], unavailable: 'It wrote no report and said nothing about why.', launchLines: [] },
  });
  const argv = ['python3', '-c', "print('all fine')", 'a b'];
  const evidence = { ...evidenceOf([clean, failed('memcheck'), failed('racecheck'), failed('initcheck')], { thorough: true }), argv };
  const v = judge(evidence, { cwd: '/w/my proj', envChanges: { HF_TOKEN: 'hf_secret', CUDA_VISIBLE_DEVICES: '1' } });
  assert.equal(
    v.sentence,
    'The program exited cleanly, but not every check looked: memcheck, racecheck and initcheck could not run (it wrote no report and said nothing about why).',
  );
  assert.deepEqual(v.whatToDo, [
    `Run each alone to see what compute-sanitizer says: \`gpu-workbench sanitize --tool memcheck --cwd '/w/my proj' -- python3 -c 'print('\\''all fine'\\'')' 'a b'\` (and the same with --tool racecheck and --tool initcheck). Give it the variables the program ran with, too: --env HF_TOKEN=… and --env CUDA_VISIBLE_DEVICES=….`,
  ]);
  assert.ok(!v.whatToDo.join(' ').includes('hf_secret'), 'a variable is named, its value never written: a bundle hides it');
  // Without the program's place (a report too old to carry it), the command is the words alone.
  assert.match(judge(evidence).whatToDo[0]!, /`gpu-workbench sanitize --tool memcheck -- python3 /);
  const command = v.whatToDo[0]!.match(/ -- (.*)` \(and the same/)![1]!;
  assert.deepEqual(splitCommandLine(command), { ok: true, argv }, 'the words typed back are the program’s');
});

/** A sanitizer finding of a kind no specific rule names, as the tool's report reader groups it. */
function otherGroup(kind: FindingGroup['kind'], text: string, api: SanitizerFinding['api'] = null): FindingGroup {
  const example = {
    tool: 'memcheck',
    kind,
    recordKind: kind === 'api-error' ? 'Api' : 'Synccheck',
    severity: 'error',
    text,
    where: null,
    thread: null,
    block: null,
    access: null,
    nearest: null,
    leak: null,
    api,
    race: null,
    detail: null,
    hostStackAt: 'error',
    hostStack: [],
  } satisfies SanitizerFinding;
  return {
    key: `memcheck:${kind}`,
    tool: 'memcheck',
    kind,
    severity: 'error',
    text,
    where: null,
    count: 2,
    threads: null,
    blocks: null,
    example,
    userFrame: { func: '<module>', module: null, pc: null, file: 'copy.py', line: 12 },
    leakedBytes: 0,
    hazards: 0,
  };
}

test('a sanitizer finding that no rule names (an API error the program ignored) is the verdict, never "clean"', () => {
  const clean = recordedRun('cupy-race.as-is');
  const memcheck: RunEvidence = {
    ...recordedRun('cupy-race.as-is', 'memcheck'),
    sanitizer: {
      verdict: 'found',
      headline: 'memcheck found 1 finding.',
      groups: [
        otherGroup('api-error', 'Program hit cudaErrorInvalidValue (error 1) on CUDA API call to cudaMemcpy.', {
          call: 'cudaMemcpy',
          error: 'cudaErrorInvalidValue',
          code: 1,
          message: null,
        }),
      ],
      unavailable: null,
      launchLines: [],
    },
  };
  const v = judge(evidenceOf([clean, memcheck], { thorough: true }));
  assert.equal(v.kind, 'sanitizer-finding');
  assert.equal(v.rule, 'other-sanitizer-finding');
  assert.match(v.sentence, /^memcheck reported: cudaMemcpy returned cudaErrorInvalidValue, at copy\.py:12 \(2 times\)\.$/);
  assert.deepEqual(v.userLine, { file: 'copy.py', line: 12, code: null, function: '<module>' });
  assert.match(v.whatToDo[0]!, /Check the result of every CUDA call \(cudaMemcpy here\)/);
  assert.equal(verdictSeverity(v.kind).level, 'fail');
});

test('a kernel fault: the advice leaves out the blocking re-run and memcheck the diagnosis already made, and says what memcheck saw', () => {
  const illegal = recordedRun('pytorch-device-assert.as-is');
  illegal.failure = {
    ...illegal.failure,
    error: { name: 'CUDA_ERROR_ILLEGAL_ADDRESS', code: 700, runtimeName: 'cudaErrorIllegalAddress' },
    asserts: [],
    specifics: [
      'Re-run with CUDA_LAUNCH_BLOCKING=1 so that every launch waits for its kernel and the traceback stops at the real operation.',
      'Run it under compute-sanitizer --tool memcheck python your_script.py for the kernel, its line and the thread.',
      'Check the indices you pass.',
    ],
  };
  const alone = judge(evidenceOf([illegal]));
  assert.equal(alone.kind, 'kernel-fault');
  assert.equal(alone.whatToDo.length, 3, 'nothing was re-run: all the advice stands');
  const blocking = { ...illegal, kind: 'blocking' as const };
  const memcheck = (verdict: 'clean' | 'tool-failed'): RunEvidence => ({
    ...illegal,
    kind: 'memcheck',
    failure: { ...illegal.failure, category: 'cuda-error' },
    sanitizer: {
      verdict,
      headline: verdict === 'clean' ? 'memcheck found nothing.' : 'memcheck did not finish its check (exit 9).',
      groups: [],
      unavailable: null,
      launchLines: [],
    },
  });
  const done = judge(evidenceOf([illegal, blocking, memcheck('clean')]));
  assert.deepEqual(done.whatToDo, ['Check the indices you pass.']);
  assert.match(done.cause, /memcheck saw no out-of-bounds or misaligned access\.$/);
  const failed = judge(evidenceOf([illegal, blocking, memcheck('tool-failed')]));
  assert.equal(failed.whatToDo.length, 2, 'memcheck gave no verdict: its advice stands');
  assert.match(failed.cause, /memcheck gave no verdict \(memcheck did not finish its check \(exit 9\)\)\.$/);
});

test('a host crash: "the fault is in host code" only where memcheck watched up to the crash, not where the tool failed by itself', () => {
  const crash = recordedRun('ctypes-segfault.as-is');
  const handler = recordedRun('ctypes-segfault.faulthandler', 'fault-handler');
  const underTool = (category: 'host-crash' | 'exit-code'): RunEvidence => ({
    ...crash,
    kind: 'memcheck',
    failure: { ...crash.failure, category },
    sanitizer: { verdict: 'tool-failed', headline: 'memcheck did not finish its check (exit 11).', groups: [], unavailable: null, launchLines: [] },
  });
  assert.match(judge(evidenceOf([crash, handler, underTool('host-crash')])).sentence, /memcheck saw no device error, so the fault is in host code\.$/);
  assert.match(
    judge(evidenceOf([crash, handler, underTool('exit-code')])).sentence,
    /memcheck gave no verdict \(memcheck did not finish its check \(exit 11\)\), so a device fault is not ruled out\.$/,
  );
});

test('memory held by an allocator explains a "found" exit only when every error the tool counted was printed and is one of those blocks', () => {
  const held = [{ holder: 'cupy-memory-pool' as const, bytes: 1000, blocks: 2, groups: [] }];
  const facts = (notPrinted: number, errorsReported: number) =>
    judgeSanitizeRun({
      tool: 'memcheck',
      exitCode: 86,
      signal: null,
      timedOut: null,
      cancelled: false,
      findings: 0,
      groups: [],
      summary: {
        errorsReported,
        warningsReported: null,
        hazardsDisplayed: null,
        notPrinted,
        leakedBytes: 1000,
        leakedAllocations: 2,
        targetReturnedError: false,
        toolErrors: [],
      },
      xmlFiles: 1,
      problems: [],
      held,
    } as never);
  assert.equal(facts(0, 2).verdict, 'clean');
  const cut = facts(350, 352);
  assert.equal(cut.verdict, 'tool-failed');
  assert.match(cut.headline, /the rest were not printed/);
  assert.equal(facts(0, 5).verdict, 'tool-failed');
});

test('output streams at once after a quiet spell, batched within a tick, in order, and says once when it stops being sent', async () => {
  const sent: [string, string][] = [];
  const s = new OutputStreamer((text, stream) => sent.push([text, stream]));
  s.push('a\n', 'stdout');
  assert.deepEqual(sent, [['a\n', 'stdout']], 'the first line at once');
  s.push('b\n', 'stdout');
  s.push('c\n', 'stdout');
  s.push('E\n', 'stderr');
  assert.deepEqual(sent.slice(1), [['b\nc\n', 'stdout']], 'a change of stream sends what came before it');
  await new Promise((r) => setTimeout(r, OUTPUT_TICK_MS + 20));
  assert.deepEqual(sent.at(-1), ['E\n', 'stderr']);
  const big = new OutputStreamer((text, stream) => sent.push([text, stream]));
  big.push('x'.repeat(16 * 2 ** 20 + 1), 'stdout');
  big.push('more', 'stdout');
  assert.match(sent.at(-1)![0], /passed 16 MiB; the rest is not shown as it comes/);
  big.flush();
});

test('a driver too old for the program: the cause and the fix say the versions the Before step read', () => {
  const output = [
    'Traceback (most recent call last):',
    '  File "/home/u/train.py", line 3, in <module>',
    '    x = torch.zeros(4, device="cuda")',
    'RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver.',
    '',
  ].join('\n');
  const exit = { code: 1, signal: null, outOfBudget: false, cancelled: false };
  const run: RunEvidence = { ...recordedRun('pytorch-tensor-on-cpu.as-is'), output, exit, failure: readFailure(output, exit) };
  const environment = {
    ...evidenceOf([]).environment,
    driver: { version: '470.82.01', cuda: '11.4' },
    python: { version: '3.11.7', torch: { version: '2.11.0', cuda: '12.8' }, cupy: null },
  };
  const v = judge(evidenceOf([run], { environment }));
  assert.match(v.sentence, /^The NVIDIA driver is older than the CUDA the program was built with at train\.py:3/);
  assert.match(v.cause, /PyTorch 2\.11\.0 was built for CUDA 12\.8; the driver \(470\.82\.01\) runs CUDA up to 11\.4\.$/);
  assert.match(v.whatToDo[0]!, /a build of the library for CUDA 11\.4 or older/);
  const unknown = judge(evidenceOf([run], { environment: { ...environment, driver: null, python: null } }));
  assert.match(unknown.whatToDo[0]!, /nvidia-smi shows it top right/, 'without the versions, the general advice');
});
