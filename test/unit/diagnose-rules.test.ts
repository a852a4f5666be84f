import assert from 'node:assert/strict';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { programEnvironmentChecks } from '../../core/diagnose/environment-rules';
import type { LibcudaOnPath } from '../../core/diagnose/libcuda-rules';
import { libcudaRelease } from '../../core/doctor/driver-rules';
import type { RunEvidence, SanitizerEvidence } from '../../core/diagnose/evidence';
import { rawKernelLaunchLine, shortCommand } from '../../core/diagnose/launch-line';
import { NEXT_STEP_RULES, nextStep } from '../../core/diagnose/next-step-rules';
import { oomPicture } from '../../core/diagnose/oom-picture';
import { deathSignal, exitText, faultHandlerFrames, readFailure } from '../../core/diagnose/read-failure';
import { judge, VERDICT_RULES } from '../../core/diagnose/verdict-rules';
import { buildSnapshotModel } from '../../core/memory/snapshot-model';
import { unpickle } from '../../core/memory/unpickle';
import type { FindingGroup } from '../../core/sanitizer/findings';
import { diagnosisMismatches, programSampleSchema } from '../../core/samples/program-sample';
import type { DiagnosisReport } from '../../core/diagnose/report';
import { evidenceOf, H200_GPUS, PROGRAM_FIXTURES, recordedRun } from '../helpers/program-fixtures';

const ROOT = join(__dirname, '../../..');
const base = (p: string | undefined) => p?.split('/').pop();

test('read-failure: every recorded H200 output is read as the failure it is, with the line in the user’s own code', () => {
  const cases: [string, string, string | null][] = [
    ['pytorch-device-assert.as-is', 'kernel-fault', 'embed.py:17'],
    ['pytorch-device-assert.blocking', 'kernel-fault', 'embed.py:16'],
    ['pytorch-oom-too-large.as-is', 'out-of-memory', 'join.py:20'],
    ['pytorch-oom-other-process.as-is', 'out-of-memory', 'hog.py:32'],
    ['pytorch-tensor-on-cpu.as-is', 'python-error', 'classify.py:12'],
    ['cuda-visible-devices.as-is', 'cuda-error', 'train.py:11'],
    ['ctypes-segfault.as-is', 'host-crash', null],
    ['ctypes-segfault.faulthandler', 'host-crash', 'peek.py:29'],
    ['cupy-race.as-is', 'clean', null],
    ['ctypes-leak.as-is', 'clean', null],
  ];
  for (const [name, category, line] of cases) {
    const f = recordedRun(name).failure;
    assert.equal(f.category, category, name);
    assert.equal(f.userFrame ? `${base(f.userFrame.file)}:${f.userFrame.line}` : null, line, name);
  }
  assert.equal(recordedRun('pytorch-device-assert.as-is').failure.launchBlocking, false);
  assert.equal(recordedRun('pytorch-device-assert.blocking').failure.launchBlocking, true);
  assert.equal(recordedRun('pytorch-device-assert.as-is').failure.asserts[0]?.kernel, 'vectorized_gather_kernel');
  assert.equal(recordedRun('ctypes-segfault.faulthandler').failure.innermost?.function, 'string_at');
});

test('read-failure: signals are decoded from Node, from a shell’s 128+n, and from compute-sanitizer’s exit', () => {
  assert.equal(deathSignal({ code: null, signal: 'SIGSEGV' }), 'SIGSEGV');
  assert.equal(deathSignal({ code: 139, signal: null }), 'SIGSEGV');
  assert.equal(deathSignal({ code: 11, signal: null }), null, 'a program’s own exit code 11 is not a signal');
  assert.equal(deathSignal({ code: 11, signal: null }, true), 'SIGSEGV', 'compute-sanitizer exits with the signal’s number');
  assert.equal(deathSignal({ code: 1, signal: null }, true), null);
  assert.match(exitText({ code: 134, signal: null, outOfBudget: false, cancelled: false }), /SIGABRT \(an abort/);
  assert.equal(exitText({ code: null, signal: 'SIGTERM', outOfBudget: true, cancelled: false }), 'stopped: the time budget ran out');
  assert.deepEqual(faultHandlerFrames('no handler here'), []);
});

test('next step: a device assert reported late calls for a blocking re-run, and nothing after it', () => {
  const first = recordedRun('pytorch-device-assert.as-is');
  const step = nextStep(evidenceOf([first]));
  assert.equal(step?.kind, 'blocking');
  assert.match(step!.why, /CUDA_LAUNCH_BLOCKING=1.*operation that failed/);
  assert.match(step!.why, /it blames embed\.py:17/);
  assert.equal(nextStep(evidenceOf([first, recordedRun('pytorch-device-assert.blocking', 'blocking')])), null, 'the assert names the kernel: no memcheck');
});

test('next step: an illegal address calls for a blocking re-run, then memcheck; an OOM for the allocator history; a silent crash for the fault handler, then memcheck', () => {
  const illegal = recordedRun('pytorch-device-assert.as-is');
  illegal.failure = { ...illegal.failure, error: { name: 'CUDA_ERROR_ILLEGAL_ADDRESS', code: 700, runtimeName: 'cudaErrorIllegalAddress' }, asserts: [] };
  const blocking = { ...illegal, kind: 'blocking' as const };
  assert.equal(nextStep(evidenceOf([illegal, blocking]))?.kind, 'memcheck');

  assert.equal(nextStep(evidenceOf([recordedRun('pytorch-oom-too-large.as-is')]))?.kind, 'allocator-history');
  assert.equal(nextStep(evidenceOf([recordedRun('pytorch-oom-too-large.as-is')], { python: false })), null, 'the shim is Python: not for a C++ program');

  const crash = recordedRun('ctypes-segfault.as-is');
  assert.equal(nextStep(evidenceOf([crash]))?.kind, 'fault-handler');
  assert.equal(nextStep(evidenceOf([crash, recordedRun('ctypes-segfault.faulthandler', 'fault-handler')]))?.kind, 'memcheck');
  assert.equal(nextStep(evidenceOf([crash], { python: false }))?.kind, 'memcheck');
});

test('next step: not a fault, nothing; a clean exit offers the passes, --thorough runs each once; a refused step is not asked for again', () => {
  assert.equal(nextStep(evidenceOf([recordedRun('pytorch-tensor-on-cpu.as-is')])), null);
  assert.equal(nextStep(evidenceOf([recordedRun('cuda-visible-devices.as-is')])), null);
  const clean = recordedRun('cupy-race.as-is');
  assert.equal(nextStep(evidenceOf([clean])), null);
  const e = evidenceOf([clean], { thorough: true });
  const order: string[] = [];
  for (let s = nextStep(e); s; s = nextStep(e)) {
    order.push(s.kind);
    e.notRun.push({ kind: s.kind, why: s.why, reason: 'test' });
  }
  assert.deepEqual(order, ['memcheck', 'racecheck', 'initcheck']);
  assert.equal(new Set(NEXT_STEP_RULES.map((r) => r.id)).size, NEXT_STEP_RULES.length, 'rule ids are unique');
});

test('verdict: the device assert names the embedding call that the blocking re-run found, and the line the first run blamed', () => {
  const v = judge(evidenceOf([recordedRun('pytorch-device-assert.as-is'), recordedRun('pytorch-device-assert.blocking', 'blocking')]));
  assert.equal(v.kind, 'device-assert');
  assert.equal(`${base(v.userLine?.file)}:${v.userLine?.line}`, 'embed.py:16');
  assert.equal(v.userLine?.code, 'out = table(tokens)');
  assert.equal(`${base(v.misleadingLine?.file)}:${v.misleadingLine?.line}`, 'embed.py:17');
  assert.equal(v.kernel?.name, 'vectorized_gather_kernel');
  assert.match(v.cause, /found by the re-run with CUDA_LAUNCH_BLOCKING=1/);
  const alone = judge(evidenceOf([recordedRun('pytorch-device-assert.as-is')]));
  assert.match(alone.cause, /no blocking re-run was made/, 'without the re-run it says the line may be wrong');
});

test('verdict: an out-of-memory with the allocator history says what was alive at the failure, by the user’s line', () => {
  const model = buildSnapshotModel(unpickle(new Uint8Array(readFileSync(join(PROGRAM_FIXTURES, 'pytorch-oom-too-large.pickle')))) as never);
  const picture = oomPicture(model, null);
  assert.deepEqual(
    picture.aliveByLine.map((a) => `${base(a.frame?.file)}:${a.frame?.line}`),
    ['join.py:12', 'join.py:13'],
  );
  assert.equal(picture.requestedBytes, 120087904256);
  const history = { ...recordedRun('pytorch-oom-too-large.history', 'allocator-history'), oomPicture: picture };
  const v = judge(evidenceOf([recordedRun('pytorch-oom-too-large.as-is'), history]));
  assert.equal(v.kind, 'out-of-memory');
  assert.match(v.sentence, /^Out of GPU memory at join\.py:20 .*asking for 111\.84 GiB: the request alone is 80% of the GPU\.$/);
  assert.match(v.cause, /Alive at the failure: 55\.92 GiB from join\.py:12, 55\.92 GiB from join\.py:13\./);
  assert.equal(v.whatToDo.length, 1);
  assert.ok(!v.cause.includes(v.whatToDo[0]!), 'what to do is not repeated in the cause');
});

test('verdict: another process holding the GPU is named with its command and as the program’s child', () => {
  const first = recordedRun('pytorch-oom-other-process.as-is');
  first.processes = [
    {
      pid: 547,
      command: '/opt/torch/.venv/bin/python3 -c ?import sys, time, torch?free, total = torch.cuda.mem_get_info()? cache-server',
      peakBytes: 127668322304,
      isProgram: false,
      childOfProgram: true,
    },
    { pid: 530, command: 'python3 hog.py', peakBytes: 543162368, isProgram: true, childOfProgram: false },
  ];
  const v = judge(evidenceOf([first]));
  assert.match(v.sentence, /process 547 \(a child of the program: python3 -c … cache-server\) held 118\.9 GiB\.$/);
});

test('verdict: a hidden GPU, a tensor on the CPU, a host crash', () => {
  const [visible] = programEnvironmentChecks({ env: { CUDA_VISIBLE_DEVICES: '7' }, gpus: H200_GPUS, driver: null, python: null });
  const hidden = judge(evidenceOf([recordedRun('cuda-visible-devices.as-is')], { environment: { ...evidenceOf([]).environment, checks: [visible!] } }));
  assert.equal(hidden.kind, 'environment');
  assert.match(hidden.sentence, /CUDA_VISIBLE_DEVICES="7" names GPU 7, but this machine has 1 GPU \(0: NVIDIA H200\)/);

  const cpu = judge(evidenceOf([recordedRun('pytorch-tensor-on-cpu.as-is')]));
  assert.equal(cpu.kind, 'python-error');
  assert.match(cpu.sentence, /passes `mat1` from the CPU at classify\.py:12/);
  assert.match(cpu.whatToDo[0]!, /\.to\("cuda:0"\)/);

  const sanitizer: SanitizerEvidence = { verdict: 'tool-failed', headline: '', groups: [], unavailable: null, launchLines: [] };
  const recorded = recordedRun('ctypes-segfault.memcheck', 'memcheck');
  // Read as the sanitizer step reads it: the tool's exit 11 is the program's SIGSEGV.
  const memcheck: RunEvidence = { ...recorded, sanitizer, failure: readFailure(recorded.output, recorded.exit, true) };
  const crash = judge(evidenceOf([recordedRun('ctypes-segfault.as-is'), recordedRun('ctypes-segfault.faulthandler', 'fault-handler'), memcheck]));
  assert.equal(crash.kind, 'host-crash');
  assert.match(crash.sentence, /SIGSEGV at peek\.py:29 inside string_at; memcheck saw no device error/);
  const unchecked = judge(evidenceOf([recordedRun('ctypes-segfault.as-is'), recordedRun('ctypes-segfault.faulthandler', 'fault-handler')]));
  assert.match(unchecked.sentence, /memcheck could not run, so a device fault is not ruled out/, 'silence is not a verdict');
});

test('verdict: a leak held by a caching allocator is not the user’s; a clean run without passes says they were not run', () => {
  const leak = (heldBy: FindingGroup['heldBy']): FindingGroup =>
    ({
      key: 'k',
      tool: 'memcheck',
      kind: 'leak',
      text: 'Leaked',
      leakedBytes: 1 << 20,
      hazards: 0,
      count: 1,
      heldBy,
      userFrame: { func: '<module>', module: null, pc: null, file: '/x/leak.py', line: 24 },
    }) as unknown as FindingGroup;
  // The sanitize report calls a run clean when every error the tool counted is a block an allocator held (judgeSanitizeRun).
  const run = (g: FindingGroup, verdict: 'found' | 'clean' = g.heldBy ? 'clean' : 'found'): RunEvidence => ({
    ...recordedRun('ctypes-leak.as-is', 'memcheck'),
    sanitizer: { verdict, headline: verdict === 'found' ? 'memcheck found 3 errors.' : '', groups: [g], unavailable: null, launchLines: [] },
  });
  const clean = recordedRun('ctypes-leak.as-is');
  assert.equal(judge(evidenceOf([clean, run(leak(null))])).kind, 'leak');
  assert.equal(judge(evidenceOf([clean, run(leak('cupy-memory-pool'))])).kind, 'clean');
  const unexplained = judge(evidenceOf([clean, run(leak('cupy-memory-pool'), 'found')]));
  assert.equal(unexplained.kind, 'incomplete', 'errors the tool counted beyond the held blocks: not clean');
  assert.match(unexplained.sentence, /memcheck gave no verdict \(memcheck found 3 errors\)/);
  const alone = judge(evidenceOf([clean]));
  assert.match(alone.sentence, /the sanitizer passes were not run/);
  assert.deepEqual(alone.whatToDo, ['Run it again with --thorough for memcheck (with its leak check), racecheck and initcheck.']);
  assert.equal(new Set(VERDICT_RULES.map((r) => r.id)).size, VERDICT_RULES.length);
});

test('environment: CUDA_VISIBLE_DEVICES against the GPUs that exist, and the libraries’ CUDA against the driver’s', () => {
  const two = [...H200_GPUS!, { ...H200_GPUS![0]!, index: 1 }];
  assert.equal(programEnvironmentChecks({ env: { CUDA_VISIBLE_DEVICES: '7' }, gpus: H200_GPUS, driver: null, python: null })[0]?.status, 'fail');
  const partly = programEnvironmentChecks({ env: { CUDA_VISIBLE_DEVICES: '1,7' }, gpus: two, driver: null, python: null });
  assert.equal(partly[0]?.status, 'warn');
  assert.match(partly[0]!.detail, /sees only 1/);
  const fine = programEnvironmentChecks({ env: { CUDA_VISIBLE_DEVICES: '0' }, gpus: two, driver: null, python: null });
  assert.deepEqual(
    fine.map((c) => c.id),
    ['cuda-visible-devices'],
    'a GPU that exists: only the doctor’s note on renumbering',
  );
  const python = (cuda: string) => ({ version: '3.12', torch: { version: '2.11.0', cuda }, cupy: null });
  const driver = { version: '570.1', cuda: '12.8' };
  assert.equal(programEnvironmentChecks({ env: {}, gpus: H200_GPUS, driver, python: python('13.0') })[0]?.status, 'fail');
  assert.equal(programEnvironmentChecks({ env: {}, gpus: H200_GPUS, driver, python: python('12.9') })[0]?.status, 'warn');
  assert.deepEqual(programEnvironmentChecks({ env: {}, gpus: H200_GPUS, driver, python: python('12.4') }), []);
  const stub = programEnvironmentChecks({ env: { LD_LIBRARY_PATH: '/usr/local/cuda/lib64/stubs' }, gpus: H200_GPUS, driver, python: null });
  assert.ok(
    stub.some((c) => /stub/i.test(c.title + c.detail)),
    JSON.stringify(stub),
  );
});

test('environment: a libcuda on LD_LIBRARY_PATH is set against the driver: another version fails, the driver’s own is fine', () => {
  const driver = { version: '580.159.04', cuda: '13.0' };
  const at = (dir: string, file: string | null, options: { resolved?: string; driversOwn?: boolean } = {}): LibcudaOnPath => ({
    dir,
    path: `${dir || '/work'}/libcuda.so.1`,
    resolved: options.resolved ?? `${dir || '/work'}/${file ?? 'libcuda.so.1'}`,
    version: file ? libcudaRelease(file) : null,
    driversOwn: options.driversOwn ?? false,
  });
  const checks = (found: LibcudaOnPath[], d: { version: string | null; cuda: string | null } | null = driver) =>
    programEnvironmentChecks({ env: { LD_LIBRARY_PATH: found.map((f) => f.dir).join(':') }, gpus: H200_GPUS, driver: d, python: null, libcudaOnPath: found });

  assert.equal(libcudaRelease('libcuda.so.580.159.04'), '580.159.04');
  assert.equal(libcudaRelease('libcuda.so.535.104'), '535.104');
  assert.equal(libcudaRelease('libcuda.so.1'), null);
  assert.equal(libcudaRelease('libcuda.so.1.1'), null, 'Jetson’s libcuda names no driver version');
  assert.equal(libcudaRelease('libcuda.so.580.159.04.bak'), null);

  // A conda environment's copy of another driver, with the system's own later on the path: the first one loads.
  const conda = at('/opt/conda/envs/train/lib', 'libcuda.so.535.104.05');
  const own = at('/usr/lib/x86_64-linux-gnu', 'libcuda.so.580.159.04', { driversOwn: true });
  const [mismatch] = checks([conda, own]);
  assert.equal(mismatch?.id, 'libcuda-on-path-mismatch');
  assert.equal(mismatch?.status, 'fail');
  assert.match(
    mismatch!.detail,
    /\/opt\/conda\/envs\/train\/lib\/libcuda\.so\.1 \(\/opt\/conda\/envs\/train\/lib\/libcuda\.so\.535\.104\.05\), libcuda 535\.104\.05/,
  );
  assert.match(mismatch!.detail, /kernel driver is 580\.159\.04/);
  assert.match(mismatch!.detail, /CUDA_ERROR_SYSTEM_DRIVER_MISMATCH \(803\)/);
  assert.match(mismatch!.detail, /hides \/usr\/lib\/x86_64-linux-gnu\/libcuda\.so\.1/);
  assert.match(mismatch!.remedy ?? '', /Remove \/opt\/conda\/envs\/train\/lib from LD_LIBRARY_PATH/);
  // An empty entry is named as one: "remove ." would say nothing.
  assert.match(checks([at('', 'libcuda.so.535.104.05')])[0]!.remedy ?? '', /Remove the empty entry \(which means the working folder\)/);

  // The driver's own file first, wherever it is (a container's /usr/local/nvidia/lib64; WSL's, whose name has no version).
  assert.deepEqual(checks([at('/usr/local/nvidia/lib64', 'libcuda.so.580.159.04'), conda]), []);
  assert.deepEqual(checks([at('/usr/lib/wsl/lib', null, { driversOwn: true })]), []);
  // A copy whose name carries no version and is not the driver's file: it may or may not match, and that is said.
  const [unknown] = checks([at('/home/me/lib', null)]);
  assert.equal(unknown?.id, 'libcuda-on-path-unknown');
  assert.equal(unknown?.status, 'warn');
  assert.match(unknown!.detail, /is not known/);
  // Without the driver's version (no NVML) nothing is judged here: the environment's problems say NVML was not read.
  assert.deepEqual(checks([conda], null), []);
  assert.deepEqual(checks([conda], { version: null, cuda: '13.0' }), []);

  // Forward compatibility: conda-forge's cuda-compat linked into the environment, newer than the driver, is its purpose.
  const condaCompat = (version: string) =>
    at('/opt/conda/envs/new/lib', `libcuda.so.${version}`, { resolved: `/opt/conda/envs/new/cuda-compat/libcuda.so.${version}` });
  assert.deepEqual(checks([condaCompat('590.44.01')]), []);
  // Older than the driver (an image built for an older host) it cannot run.
  const [older] = checks([condaCompat('575.57.08')]);
  assert.equal(older?.id, 'libcuda-compat-older');
  assert.equal(older?.status, 'fail');
  assert.match(older!.detail, /compat package's libcuda 575\.57\.08, but the kernel driver is 580\.159\.04/);
  // The toolkit's compat folder, newer: the doctor's note on where compat applies, named by the file the program loads.
  const [compat] = checks([at('/usr/local/cuda/compat', 'libcuda.so.590.10.01')]);
  assert.equal(compat?.id, 'libcuda-compat');
  assert.equal(compat.title, 'The program will load the forward-compatibility driver library');
  assert.match(
    compat.detail,
    /^The program will load libcuda from \/usr\/local\/cuda\/compat\/libcuda\.so\.1, the first on its LD_LIBRARY_PATH: the CUDA compat package/,
  );
  assert.equal(checks([at('/usr/local/cuda/compat', 'libcuda.so.590.10.01')]).length, 1);
  // A stubs folder's libcuda.so.1 first is the doctor's stub finding.
  const stub = checks([at('/usr/local/cuda/lib64/stubs', null)]);
  assert.deepEqual(
    stub.map((c) => c.id),
    ['libcuda-stub'],
  );
  // Said as what the program will do, not as what the workbench did: it loaded the driver's own.
  assert.equal(stub[0]!.title, 'The driver library the program will load is a build stub');
  assert.match(
    stub[0]!.detail,
    /^The program will load libcuda from \/usr\/local\/cuda\/lib64\/stubs\/libcuda\.so\.1, the first on its LD_LIBRARY_PATH: the toolkit's link-time stub/,
  );
  // Nothing on the path: the rule is silent.
  assert.deepEqual(checks([]), []);
});

test('launch line: the one call of a CuPy RawKernel in its file, never a guess among several; commands shortened for a sentence', () => {
  const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');
  assert.equal(rawKernelLaunchLine(read('samples/programs/cupy-race/reduce.py'), 'block_sum'), 25);
  assert.equal(rawKernelLaunchLine(read('samples/programs/cupy-out-of-bounds/oob.py'), 'scale'), 29);
  const twice = 'k = cupy.RawKernel(S, "f")\nk((1,), (1,), ())\nk((2,), (1,), ())\n';
  assert.equal(rawKernelLaunchLine(twice, 'f'), null);
  assert.equal(rawKernelLaunchLine('k = cupy.RawKernel(S, "g")\nk((1,), (1,), ())\n', 'f'), null);
  assert.equal(
    shortCommand('python3 -m torch.distributed.run --nproc 8 train.py with many many arguments that go on and on and on'),
    'python3 -m … torch.distributed.run',
  );
  assert.equal(shortCommand('short one'), 'short one');
});

test('the program gallery: every sample’s manifest parses, and its script exists', () => {
  const dir = join(ROOT, 'samples/programs');
  const names = readdirSync(dir).filter((n) => existsSync(join(dir, n, 'diagnose.json')));
  assert.equal(names.length, 9);
  for (const name of names) {
    const sample = programSampleSchema.parse(JSON.parse(readFileSync(join(dir, name, 'diagnose.json'), 'utf8')));
    const script = sample.command.find((w) => w.endsWith('.py'));
    assert.ok(script && existsSync(join(dir, name, script)), `${name}: ${script}`);
    if (sample.expect.line) assert.ok(existsSync(join(dir, name, sample.expect.line.file)), name);
    // What the GPU suite expects, held against what a GPU run gave (test/fixtures/diagnoses/, recorded by that suite).
    const recorded = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/diagnoses', `${name}.json`), 'utf8')) as DiagnosisReport;
    assert.deepEqual(diagnosisMismatches(recorded, sample.expect), [], `${name}: ${recorded.verdict.sentence}`);
  }
});

test('the rules of today, on the evidence each sample’s GPU run recorded, still give what the sample expects', () => {
  // The recorded verdicts above were judged by the rules of their day; words change since (a line's comment, a
  // grouped clause), and this holds the present rules to the GPU's evidence without a GPU.
  const dir = join(ROOT, 'samples/programs');
  for (const name of readdirSync(dir).filter((n) => existsSync(join(dir, n, 'diagnose.json')))) {
    const sample = programSampleSchema.parse(JSON.parse(readFileSync(join(dir, name, 'diagnose.json'), 'utf8')));
    const recorded = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/diagnoses', `${name}.json`), 'utf8')) as DiagnosisReport;
    const verdict = judge(recorded.evidence);
    assert.deepEqual(diagnosisMismatches({ ...recorded, verdict }, sample.expect), [], `${name}: ${verdict.sentence}`);
    assert.deepEqual(
      [verdict.kind, verdict.rule, verdict.userLine?.line, verdict.kernel?.name],
      [recorded.verdict.kind, recorded.verdict.rule, recorded.verdict.userLine?.line, recorded.verdict.kernel?.name],
      `${name}: the same judgement`,
    );
  }
});

test('read-failure: a hostile or huge output is read within bounds', () => {
  const huge = `${'x'.repeat(5_000_000)}\nRuntimeError: CUDA error: an illegal memory access was encountered\n`;
  const f = readFailure(huge, { code: 1, signal: null, outOfBudget: false, cancelled: false });
  assert.equal(f.error?.code, 700);
  const nested = 'Traceback (most recent call last):\n' + '  File "a.py", line 1, in f\n'.repeat(100_000) + 'ValueError: x\n';
  assert.equal(readFailure(nested, { code: 1, signal: null, outOfBudget: false, cancelled: false }).category, 'python-error');
});
