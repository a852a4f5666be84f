import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import type { HostFrame, SanitizerFinding, SanitizerTool } from '../../core/sanitizer/findings';
import { groupFindings, userFrame } from '../../core/sanitizer/group';
import { mergeText, parseSanitizerText } from '../../core/sanitizer/parse-text';
import { parseHostFrame, parseSanitizerTextFindings, withoutParameters } from '../../core/sanitizer/parse-text-findings';
import { DEFAULT_SANITIZER_XML_LIMITS, parseSanitizerXml } from '../../core/sanitizer/parse-xml';
import { ROOT } from '../helpers/cli';

const DIR = join(ROOT, 'test/fixtures/sanitizer/h100');
const read = (name: string) => readFileSync(join(DIR, name), 'utf8');
const basename = (p: string | null) => (p === null ? null : p.slice(p.lastIndexOf('/') + 1));

/**
 * Every XML in the fixtures with the text the same run printed: `<tool>-<case>.xml` and `.xml.txt`, the program
 * samples' `program-<name>.xml` and `.xml.txt`, and the gallery runs' `gallery-<sample>-<variant>-<pid>.xml` and
 * `gallery-<sample>-<variant>.txt` (the tool is the one the sample is for).
 */
const GALLERY_TOOL: Record<string, SanitizerTool> = {
  'divergent-barrier': 'synccheck',
  'oob-off-by-one': 'memcheck',
  'shared-memory-race': 'racecheck',
  'uninitialised-read': 'initcheck',
};
const pairs = readdirSync(DIR)
  .filter((n) => n.endsWith('.xml'))
  .sort()
  .map((xml) => {
    if (xml.startsWith('gallery-')) {
      const sample = Object.keys(GALLERY_TOOL).find((s) => xml.startsWith(`gallery-${s}-`))!;
      return { xml, text: xml.replace(/-\d+\.xml$/, '.txt'), tool: GALLERY_TOOL[sample]! };
    }
    const tool = (xml.startsWith('program-') ? 'memcheck' : xml.slice(0, xml.indexOf('-'))) as SanitizerTool;
    return { xml, text: `${xml}.txt`, tool };
  });

/**
 * What the text cannot carry, and so what is normalised in the XML's finding before the two are compared — nothing else:
 * 1. `where.path` and both race sides' `where.path`: the text prints the basename (`sanitizer_cases.cu`), the XML the full path.
 * 2. `hostStack`: the text prints only some of the XML's frames (it leaves out most driver and CUDA runtime frames and
 *    the C runtime's below `main`): the XML's stack is cut to the frames the text printed, found in order (by pc, or a
 *    Python frame's file and line); every one of the text's frames must be found.
 * 3. A host frame's `module` and a Python frame's `file`: the text prints the basename (`cases` for `/tmp/cases`).
 * `func` needs no normalising: the text parser takes the parameter list off as the XML does. `nearest` is null in both.
 */
const withBasename = <T extends { path: string | null } | null>(w: T): T => (w === null ? w : { ...w, path: basename(w.path) });
const frameBasenames = (f: HostFrame): HostFrame => ({ ...f, module: basename(f.module), file: basename(f.file) });

function normaliseXml(x: SanitizerFinding, t: SanitizerFinding, label: string): SanitizerFinding {
  const frames: HostFrame[] = [];
  let i = 0;
  for (const tf of t.hostStack) {
    const same = (xf: HostFrame) => (tf.pc !== null ? xf.pc === tf.pc : xf.pc === null && basename(xf.file) === tf.file && xf.line === tf.line);
    while (i < x.hostStack.length && !same(x.hostStack[i]!)) i++;
    assert.ok(i < x.hostStack.length, `${label}: the text's frame ${JSON.stringify(tf)} is not in the XML's stack (in order)`);
    frames.push(frameBasenames(x.hostStack[i++]!));
  }
  return {
    ...x,
    where: withBasename(x.where),
    race: x.race && {
      ...x.race,
      first: { ...x.race.first, where: withBasename(x.race.first.where) },
      second: { ...x.race.second, where: withBasename(x.race.second.where) },
    },
    hostStack: frames,
  };
}

test('the fixtures hold the pairs this file compares (XML and the text of the same run)', () => {
  const names = pairs.map((p) => p.xml);
  for (const tool of ['memcheck', 'racecheck', 'initcheck', 'synccheck'])
    for (const c of ['clean', 'leak', 'null', 'oob', 'race', 'sync', 'syncwarp', 'uninit']) assert.ok(names.includes(`${tool}-${c}.xml`), `${tool}-${c}.xml`);
  for (const name of ['program-ctypes-leak.xml', 'memcheck-oob-nolineinfo.xml', 'memcheck-many-limit10.xml', 'racecheck-race-report-all.xml'])
    assert.ok(names.includes(name), name);
  assert.ok(pairs.length >= 40, String(pairs.length));
});

test('text findings equal the XML findings of the same run, field by field, for every tool and case', () => {
  let compared = 0;
  const kinds = new Set<string>();
  for (const { xml, text, tool } of pairs) {
    const fromXml = parseSanitizerXml(tool, read(xml));
    assert.equal(fromXml.complete, true, `${xml} reads whole`);
    const fromText = parseSanitizerTextFindings(tool, read(text));
    assert.equal(fromText.findings.length, fromXml.findings.length, `${text}: as many findings as ${xml}`);
    assert.deepEqual(fromText.problems, []);
    fromText.findings.forEach((t, i) => {
      const label = `${text} #${i}`;
      const x = fromXml.findings[i]!;
      assert.ok(t.hostStack.length > 0 || x.hostStack.length === 0, `${label}: the text has host frames where the XML has`);
      assert.deepEqual(t, normaliseXml(x, t, label), label);
      kinds.add(t.recordKind);
      compared++;
    });
  }
  // Every record kind the fixtures hold was compared.
  assert.deepEqual([...kinds].sort(), ['Analysis', 'Api', 'Hazard', 'Initcheck', 'Leak', 'Precise', 'Synccheck']);
  assert.ok(compared >= 230, String(compared));
});

test('the fields the text carries as the XML does, spelled out on one record of each kind', () => {
  const oob = parseSanitizerTextFindings('memcheck', read('memcheck-oob.xml.txt')).findings;
  assert.deepEqual(
    oob.map((f) => [f.kind, f.recordKind, f.text]),
    [
      ['memory-access', 'Precise', 'Invalid __global__ write of size 4 bytes is out of bounds'],
      ['api-error', 'Api', 'Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaDeviceSynchronize.'],
      ['leak', 'Leak', 'Leaked 4000 bytes'],
      ['leak', 'Leak', 'Leaked 4000 bytes'],
    ],
  );
  const [write, api, leak] = oob;
  assert.deepEqual(write!.where, { func: 'offByOne', path: 'sanitizer_cases.cu', line: 12, pc: '0xc0' });
  assert.deepEqual(
    [write!.thread, write!.block],
    [
      { x: 232, y: 0, z: 0 },
      { x: 3, y: 0, z: 0 },
    ],
  );
  assert.deepEqual(write!.access, { direction: 'write', space: '__global__', size: 4, address: '0x7fd120800fa0', error: 'out of bounds' });
  assert.deepEqual(write!.hostStack, [{ func: 'main', module: 'cases', pc: '0x8d80', file: null, line: null }]);
  assert.equal(write!.hostStackAt, 'kernel launch time');
  assert.deepEqual(api!.api, { call: 'cudaDeviceSynchronize', error: 'cudaErrorLaunchFailure', code: 719, message: 'unspecified launch failure' });
  assert.equal(api!.hostStackAt, 'error');
  assert.deepEqual(leak!.leak, { bytes: 4000, address: '0x7fd120800000' });
  assert.deepEqual(
    leak!.hostStack.map((f) => f.func),
    ['cudaMalloc', 'cudaError cudaMalloc<float>', 'main'],
  );

  // The nearest allocation merges into the text's findings as into the XML's.
  const merged = mergeText(oob, parseSanitizerText(read('memcheck-oob.xml.txt')));
  assert.deepEqual(merged[0]!.nearest, { allocation: '0x7fd120800000', allocationSize: 4000, distance: 1, side: 'after' });

  const nolines = parseSanitizerTextFindings('memcheck', read('memcheck-oob-nolineinfo.xml.txt')).findings[0]!;
  assert.deepEqual(nolines.where, { func: 'offByOne', path: null, line: null, pc: '0xc0' });

  const python = parseSanitizerTextFindings('memcheck', read('program-ctypes-leak.xml.txt')).findings[0]!;
  assert.deepEqual(python.hostStack, [
    { func: null, module: 'libcudart.so.13.0.96', pc: '0x41b5d', file: null, line: null },
    { func: null, module: 'libcudart.so.13.0.96', pc: '0x146f2', file: null, line: null },
    { func: 'cudaMalloc', module: 'libcudart.so.13.0.96', pc: '0x50c56', file: null, line: null },
    { func: '<module>', module: null, pc: null, file: 'leak.py', line: 24 },
  ]);
  assert.deepEqual(userFrame(python), { func: '<module>', module: null, pc: null, file: 'leak.py', line: 24 });

  const race = parseSanitizerTextFindings('racecheck', read('racecheck-race.xml.txt')).findings[0]!;
  assert.deepEqual(race.race, {
    type: 'WAR',
    first: { access: 'Read', thread: null, where: { func: 'reduceWithoutSync', path: 'sanitizer_cases.cu', line: 19, pc: '0xc0' } },
    second: { access: 'Write', thread: null, where: { func: 'reduceWithoutSync', path: 'sanitizer_cases.cu', line: 17, pc: '0xe0' } },
    hazards: 512,
    address: null,
  });

  const hazard = parseSanitizerTextFindings('racecheck', read('racecheck-race-report-all.xml.txt')).findings[0]!;
  assert.deepEqual(
    [hazard.race?.type, hazard.race?.address, hazard.race?.first.thread, hazard.race?.second.thread, hazard.block],
    ['WAR', '0x680', { x: 32, y: 0, z: 0 }, { x: 160, y: 0, z: 0 }, { x: 0, y: 0, z: 0 }],
  );

  const uninit = parseSanitizerTextFindings('initcheck', read('initcheck-uninit.xml.txt')).findings[0]!;
  assert.deepEqual(uninit.access, { direction: 'read', space: '__global__', size: 4, address: '0x7f515e800000', error: null });

  const barrier = parseSanitizerTextFindings('synccheck', read('synccheck-sync.xml.txt')).findings[0]!;
  assert.deepEqual([barrier.text, barrier.detail, barrier.where?.line], ['Barrier error', 'Divergent thread(s) in warp', 30]);
});

test('the text of other runs (the .txt beside each .xml): the same records, in the same places', () => {
  const others: [string, string, SanitizerTool][] = [
    ['memcheck-oob.txt', 'memcheck-oob.xml', 'memcheck'],
    ['memcheck-null.txt', 'memcheck-null.xml', 'memcheck'],
    ['memcheck-leak.txt', 'memcheck-leak.xml', 'memcheck'],
    ['memcheck-many-limit10.txt', 'memcheck-many-limit10.xml', 'memcheck'],
    ['initcheck-uninit.txt', 'initcheck-uninit.xml', 'initcheck'],
    ['racecheck-race.txt', 'racecheck-race.xml', 'racecheck'],
    ['racecheck-race-report-all.txt', 'racecheck-race-report-all.xml', 'racecheck'],
    ['synccheck-sync.txt', 'synccheck-sync.xml', 'synccheck'],
    ['program-ctypes-leak.txt', 'program-ctypes-leak.xml', 'memcheck'],
  ];
  const shape = (f: SanitizerFinding) => [
    f.recordKind,
    f.where?.func ?? null,
    f.where?.line ?? null,
    f.thread,
    f.block,
    f.leak?.bytes ?? null,
    f.race?.hazards ?? null,
  ];
  for (const [text, xml, tool] of others) {
    const t = parseSanitizerTextFindings(tool, read(text)).findings;
    const x = parseSanitizerXml(tool, read(xml)).findings;
    assert.deepEqual(t.map(shape), x.map(shape), text);
  }
});

test('a run killed before it wrote any XML (the runner, after a sticky error): 32 writes at kernel.cu:10 from the text alone', () => {
  const { findings, problems } = parseSanitizerTextFindings('memcheck', read('gallery-null-pointer-broken.txt'));
  assert.deepEqual(problems, []);
  const writes = findings.filter((f) => f.kind === 'memory-access');
  assert.equal(writes.length, 32);
  assert.ok(writes.every((f) => f.where?.func === 'writeThrough' && f.where.path === 'kernel.cu' && f.where.line === 10 && f.where.pc === '0xc0'));
  assert.deepEqual(
    writes.map((f) => f.thread?.x),
    Array.from({ length: 32 }, (_, i) => i),
  );
  assert.ok(writes.every((f) => f.block?.x === 0 && f.access?.address === `0x${(4 * f.thread!.x).toString(16)}`));
  // The three API errors the sticky fault left behind (the driver API's names).
  assert.deepEqual(
    findings.filter((f) => f.kind === 'api-error').map((f) => [f.api?.call, f.api?.error, f.api?.code]),
    [
      ['cuEventSynchronize', 'CUDA_ERROR_LAUNCH_FAILED', 719],
      ['cuEventDestroy_v2', 'CUDA_ERROR_LAUNCH_FAILED', 719],
      ['cuEventDestroy_v2', 'CUDA_ERROR_LAUNCH_FAILED', 719],
    ],
  );

  const stack = writes[0]!.hostStack;
  assert.equal(stack.length, 10);
  assert.deepEqual(stack[0], { func: 'cuLaunchKernel', module: 'libcuda.so.1', pc: '0x39fb94', file: null, line: null });
  assert.deepEqual(stack[1], {
    func: 'std::_Function_handler<void (Failure&), Launch(Napi::CallbackInfo const&)::{lambda(Failure&)#1}>::_M_invoke',
    module: 'gpu_workbench_native.node',
    pc: '0x43e2d',
    file: null,
    line: null,
  });
  assert.deepEqual(
    stack.map((f) => f.module),
    ['libcuda.so.1', ...Array<string>(4).fill('gpu_workbench_native.node'), ...Array<string>(5).fill('node')],
  );
  assert.equal(stack[7]!.func, 'v8::internal::MaybeHandle<v8::internal::Object> v8::internal::(anonymous namespace)::HandleApiCallHelper<false>');
  // Every frame is the driver's, the workbench addon's or Node's: none is the user's own.
  for (const f of findings) assert.equal(userFrame(f), null, JSON.stringify(f.hostStack[0]));

  const merged = mergeText(findings, parseSanitizerText(read('gallery-null-pointer-broken.txt')));
  const groups = groupFindings(merged);
  const write = groups.find((g) => g.kind === 'memory-access')!;
  assert.deepEqual(
    [write.count, write.where?.path, write.where?.line, write.threads],
    [32, 'kernel.cu', 10, { min: { x: 0, y: 0, z: 0 }, max: { x: 31, y: 0, z: 0 } }],
  );
  assert.equal(write.example.nearest?.side, 'before');
});

test('forms not in the fixtures: misaligned, an older host frame, a warning, a driver API call, a record of a kind the text does not name', () => {
  const text = [
    '========= COMPUTE-SANITIZER',
    '========= Invalid __shared__ read of size 8 bytes',
    '=========     at void scale<float>(float *, int)+0x70 in /src/dir with space/k.cu:6',
    '=========     by thread (1,2,3) in block (4,5,6)',
    '=========     Address 0x7f671ac00001 is misaligned',
    '=========     and is inside the nearest allocation at 0x7f671ac00000 of size 16 bytes',
    '=========     Saved host backtrace up to driver entry point at kernel launch time',
    '=========         Host Frame:/usr/lib/libcuda.so.1 (cuLaunchKernel + 0x2c5) [0x204dc5]',
    '=========         Host Frame: Foo::operator()(int) const [0x1234] in app',
    '=========',
    'the program printing between records',
    '========= Warning: Race reported between Write access at k()+0x10 in k.cu:3',
    '=========     and Write access at k()+0x20 in k.cu:4 [1,024 hazards]',
    '========= ',
    '========= Program hit CUDA_ERROR_INVALID_VALUE (error 1) due to "invalid argument" on CUDA API call to cuMemFree_v2.',
    '=========     Saved host backtrace up to driver entry point at error',
    '========= ',
    '========= Warp Illegal Address',
    '=========     at k()+0x30 in k.cu:9',
    '=========     by thread (0,0,0) in block (1,0,0)',
    '=========     Address 0xdead is out of bounds',
    '========= ',
    '========= Error: Target application terminated before first instrumented API call',
    '========= ERROR SUMMARY: 4 errors',
    '',
  ].join('\r\n');
  const { findings } = parseSanitizerTextFindings('memcheck', text);
  assert.equal(findings.length, 4);
  const [misaligned, race, api, other] = findings;
  assert.equal(misaligned!.text, 'Invalid __shared__ read of size 8 bytes is misaligned');
  assert.deepEqual(misaligned!.where, { func: 'void scale<float>', path: '/src/dir with space/k.cu', line: 6, pc: '0x70' });
  assert.deepEqual(misaligned!.access, { direction: 'read', space: '__shared__', size: 8, address: '0x7f671ac00001', error: 'misaligned' });
  assert.deepEqual(
    [misaligned!.thread, misaligned!.block],
    [
      { x: 1, y: 2, z: 3 },
      { x: 4, y: 5, z: 6 },
    ],
  );
  assert.deepEqual(misaligned!.hostStack, [
    { func: 'cuLaunchKernel', module: '/usr/lib/libcuda.so.1', pc: '0x204dc5', file: null, line: null },
    { func: 'Foo::operator()', module: 'app', pc: '0x1234', file: null, line: null },
  ]);
  assert.deepEqual([race!.severity, race!.race?.type, race!.race?.hazards], ['warning', 'WAW', 1024]);
  assert.deepEqual(api!.api, { call: 'cuMemFree_v2', error: 'CUDA_ERROR_INVALID_VALUE', code: 1, message: 'invalid argument' });
  assert.deepEqual(
    [other!.kind, other!.recordKind, other!.text, other!.where?.line, other!.access?.address],
    ['device-error', '?', 'Warp Illegal Address', 9, '0xdead'],
  );
  assert.equal(mergeText(findings, parseSanitizerText(text))[0]!.nearest?.side, 'inside');
});

test('where the kept output has a gap (BoundedOutput), a record ends at it: the lines after it are not the record’s', () => {
  const text = [
    '========= Leaked 4 bytes at 0x10',
    '=========     Saved host backtrace up to driver entry point at allocation time',
    '[… 1,234 bytes of output not kept …]',
    '=========         Host Frame: main [0x1] in app',
    '=========     by thread (1,0,0) in block (0,0,0)',
    '========= ',
    '========= Leaked 8 bytes at 0x20',
    '',
  ].join('\n');
  const { findings } = parseSanitizerTextFindings('memcheck', text);
  assert.deepEqual(
    findings.map((f) => [f.leak?.bytes, f.hostStack.length, f.thread]),
    [
      [4, 0, null],
      [8, 0, null],
    ],
  );
});

test('withoutParameters and parseHostFrame: the last balanced group at the end, nothing else', () => {
  assert.equal(withoutParameters('offByOne(float *, int)'), 'offByOne');
  assert.equal(
    withoutParameters('Napi::details::CallbackData<Napi::Value (*)(Napi::CallbackInfo const&), Napi::Value>::Wrapper(napi_env__*, napi_callback_info__*)'),
    'Napi::details::CallbackData<Napi::Value (*)(Napi::CallbackInfo const&), Napi::Value>::Wrapper',
  );
  assert.equal(withoutParameters('main'), 'main');
  assert.equal(withoutParameters('(anonymous namespace)::f'), '(anonymous namespace)::f');
  assert.equal(withoutParameters('unbalanced)'), 'unbalanced)');
  assert.deepEqual(parseHostFrame(' [0x41b5d] in libcudart.so.13.0.96'), { func: null, module: 'libcudart.so.13.0.96', pc: '0x41b5d', file: null, line: null });
  assert.deepEqual(parseHostFrame(' forward in /a b/model.py:7'), { func: 'forward', module: null, pc: null, file: '/a b/model.py', line: 7 });
  // CuPy's Cython frames carry their C++ place (recorded on an H100): the XML names the file and line apart.
  assert.deepEqual(parseHostFrame(' f(long, int) [clone .constprop.124] in function.cpp:10804 [0x16fd4] in function.so'), {
    func: 'f [clone .constprop.124]',
    module: 'function.so',
    pc: '0x16fd4',
    file: 'function.cpp',
    line: 10804,
  });
});

test('bounded: the XML parser’s default count of findings, frames per record, and linear time on hostile lines', () => {
  const record = (i: number) =>
    `========= Invalid __global__ write of size 4 bytes\n=========     at k()+0x10 in k.cu:1\n=========     by thread (${i},0,0) in block (0,0,0)\n=========     Access to 0x${i.toString(16)} is out of bounds\n========= \n`;
  const five = Array.from({ length: 5 }, (_, i) => record(i)).join('');
  const capped = parseSanitizerTextFindings('memcheck', five, { maxFindings: 3 });
  assert.deepEqual([capped.findings.length, capped.records, capped.dropped], [3, 5, 2]);
  assert.match(capped.problems[0]!, /Only the first 3 findings .* 2 more records were counted and left out/);
  assert.equal(parseSanitizerTextFindings('memcheck', '').findings.length, 0);
  // Same default as the XML parser.
  assert.equal(DEFAULT_SANITIZER_XML_LIMITS.maxFindings, 200_000);

  const frames = `========= Leaked 4 bytes at 0x10\n${'=========         Host Frame: main [0x1] in app\n'.repeat(50)}`;
  const cut = parseSanitizerTextFindings('memcheck', frames, { maxFramesPerRecord: 10 });
  assert.equal(cut.findings[0]!.hostStack.length, 10);
  assert.match(cut.problems.join(' '), /more than 10 host frames/);

  // Lines built to make a backtracking pattern go quadratic, 2 MB each: read in linear time.
  const n = 2_000_000;
  const hostile = [
    `========= Invalid __global__ write of size 4 bytes`,
    `=========     at ${'a+0x'.repeat(n / 4)}`,
    `=========     Access to 0x1 is ${'x.'.repeat(n / 2)}`,
    `=========     by thread (${'1'.repeat(n)}`,
    `=========         Host Frame: ${'] in ['.repeat(n / 6)}`,
    `=========         Host Frame: ${'('.repeat(n / 2)}${')'.repeat(n / 2)} [0x1] in m`,
    `=========         Host Frame: f${' [clone '.repeat(n / 8)} [0x1] in m`,
    `=========         Host Frame: f${' in a:'.repeat(n / 6)}1 [0x1] in m`,
    `========= Error: Race reported between Read access at ${' [1 hazards]'.repeat(n / 12)}`,
    `=========     and Write access at k()+0x1 in k.cu:1${' [1 hazards]'.repeat(n / 12)}`,
    `========= Program hit ${' on CUDA API call to "'.repeat(n / 22)}`,
  ].join('\n');
  const started = performance.now();
  const r = parseSanitizerTextFindings('memcheck', hostile, { maxLineLength: n * 2 });
  const ms = performance.now() - started;
  assert.equal(r.findings.length, 3);
  assert.ok(ms < 2_000, `${ms.toFixed(0)} ms`);
});
