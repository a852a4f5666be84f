import assert from 'node:assert/strict';
import { test } from 'node:test';

import { generateRepro, generateReproSource, scalarExpression } from '../../core/bundle/repro';
import { launchPlanSchema, type LaunchPlanInput } from '../../core/plan/plan-schema';

const SOURCE = '__global__ void k(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2; }';
const plan = (over: Partial<LaunchPlanInput> = {}) =>
  launchPlanSchema.parse({
    version: 1,
    kernels: [{ id: 'k', entry: 'k', source: SOURCE, sourceName: 'scale.cu' }],
    buffers: [{ name: 'x', type: 'f32', count: 4, init: { kind: 'iota', start: 1, step: 0.5 } }],
    steps: [
      { op: 'alloc', buffer: 'x' },
      { op: 'upload', buffer: 'x' },
      { op: 'launch', kernel: 'k', grid: [1, 1, 1], block: [32, 1, 1], args: [{ buffer: 'x' }, { scalar: { type: 'i32', value: 4 } }] },
      { op: 'download', buffer: 'x', expect: { kind: 'iota', start: 2, step: 1 } },
      { op: 'free', buffer: 'x' },
    ],
    ...over,
  });

/** The program's own code, after the inlined kernel sources and the helpers. */
const mainOf = (text: string) => text.slice(text.indexOf('int main() {'));

test('the kernel source is inlined with a #line naming it, and the launch uses the plan grid, block and arguments', () => {
  const text = generateReproSource(plan());
  assert.ok(text.includes(`#line 1 "scale.cu"\n${SOURCE}`));
  const main = mainOf(text);
  assert.match(main, /int32_t s3_a1 = int32_t\(4\);/);
  assert.match(main, /void\* args\[\] = \{&d_x, &s3_a1\};/);
  assert.match(main, /const dim3 grid\(1u, 1u, 1u\), block\(32u, 1u, 1u\);/);
  assert.match(main, /CHECK\(cudaLaunchKernel\(fn, grid, block, args, 0u, 0\)\);\n\s+CHECK\(cudaDeviceSynchronize\(\)\);/);
  assert.match(main, /std::printf\("repro: OK\\n"\);/);
  // The #line after the sources brings repro.cu's own numbering back: the line it names is the next one.
  const lines = text.split('\n');
  const at = lines.findIndex((l) => /^#line \d+ "repro.cu"$/.test(l));
  assert.equal(Number(/#line (\d+)/.exec(lines[at]!)![1]), at + 2);
});

test('every CUDA call in the program is checked by the CHECK macro', () => {
  const main = mainOf(generateReproSource(plan()));
  const calls = main.split('\n').filter((l) => /\bcuda[A-Z]\w*\(/.test(l));
  assert.ok(calls.length >= 6);
  for (const line of calls) assert.match(line, /^\s*CHECK\(cuda[A-Z]\w*\(/, line);
});

test('initializers: zeros, constant, iota, random (mulberry32 with its seed) and file', () => {
  const text = generateReproSource(
    plan({
      buffers: [
        { name: 'z', type: 'i32', count: 8, init: { kind: 'zeros' } },
        { name: 'c', type: 'f16', count: 8, init: { kind: 'constant', value: 1.5 } },
        { name: 'i', type: 'u64', count: 8, init: { kind: 'iota', start: 3, step: 2 } },
        { name: 'r', type: 'i16', count: 8, init: { kind: 'random', seed: 42, min: -5, max: 5 } },
        { name: 'f', type: 'f32', count: 8, init: { kind: 'file', path: '/data/in.bin', offsetBytes: 16 } },
        { name: 'x', type: 'f32', count: 4, init: { kind: 'iota', start: 1, step: 0.5 } },
      ],
    }),
  );
  assert.match(text, /std::memset\(h\.data\(\), 0, h\.size\(\)\);/);
  assert.match(text, /store_element\(T_F16, h\.data\(\), i, 1\.5000000000000000\);/);
  assert.match(text, /store_element\(T_U64, h\.data\(\), i, 3\.0 \+ \(double\)i \* 2\.0\);/);
  assert.match(text, /Mulberry32 rng\(42u\);[\s\S]*?store_element\(T_I16, h\.data\(\), i, std::floor\(r\)\);/);
  assert.match(text, /read_file_bytes\("\/data\/in\.bin", 16ull, h\);/);
  // The same PRNG constants as core/plan/buffer-data.ts mulberry32.
  assert.match(text, /a \+= 0x6d2b79f5u;/);
});

test('a buffer with no initializer is poisoned with 0xFF bytes, as the workbench does, and said so', () => {
  const poisoned = mainOf(
    generateReproSource(
      plan({
        buffers: [{ name: 'x', type: 'f32', count: 4 }],
        steps: [
          { op: 'alloc', buffer: 'x' },
          { op: 'free', buffer: 'x' },
        ],
      }),
    ),
  );
  assert.match(poisoned, /poisons every new allocation with 0xFF bytes[\s\S]*CHECK\(cudaMemset\(d_x, 0xFF, 16ull\)\);/);
  assert.doesNotMatch(poisoned, /init_x/);
  const plain = mainOf(
    generateReproSource(
      plan({ buffers: [{ name: 'x', type: 'f32', count: 4 }], steps: [{ op: 'alloc', buffer: 'x' }], checks: { guardBytes: 256, poison: false } }),
    ),
  );
  assert.doesNotMatch(plain, /cudaMemset/);
});

test('checks: constant, iota and another buffer, with the plan tolerance or the type default', () => {
  const text = mainOf(
    generateReproSource(
      plan({
        buffers: [
          { name: 'x', type: 'f32', count: 4, init: { kind: 'zeros' } },
          { name: 'y', type: 'f32', count: 4, init: { kind: 'zeros' } },
          { name: 'n', type: 'i32', count: 4, init: { kind: 'zeros' } },
        ],
        steps: [
          { op: 'alloc', buffer: 'x' },
          { op: 'alloc', buffer: 'y' },
          { op: 'alloc', buffer: 'n' },
          { op: 'download', buffer: 'x', expect: { kind: 'constant', value: 0 }, tolerance: { abs: 0.25, rel: 0 } },
          { op: 'download', buffer: 'y', expect: { kind: 'buffer', buffer: 'x' } },
          { op: 'download', buffer: 'n', expect: { kind: 'iota', start: 0, step: 1 } },
        ],
      }),
    ),
  );
  assert.match(
    text,
    /compare\("x", "the constant 0", T_F32, back_x, 4ull, \[\]\(size_t\) \{ return round_to\(T_F32, 0\.0\); \}, 0\.25000000000000000, 0\.0, false\)/,
  );
  assert.match(
    text,
    /compare\("y", "buffer x", T_F32, back_y, 4ull, \[&\]\(size_t i\) \{ return load_element\(T_F32, back_x\.data\(\), i\); \}, 9\.9999999999999995e-7, 0\.000010000000000000001, false\)/,
  );
  assert.match(text, /compare\("n", "iota\(start 0, step 1\)", T_I32, back_n, 4ull, .*, 0\.0, 0\.0, true\)/);
  assert.match(text, /return 3;/);
});

test('more than 48 KiB of dynamic shared memory raises the kernel limit first; repeats launch in a loop', () => {
  const text = mainOf(
    generateReproSource(
      plan({
        steps: [
          { op: 'alloc', buffer: 'x' },
          {
            op: 'launch',
            kernel: 'k',
            grid: [2, 1, 1],
            block: [64, 1, 1],
            sharedBytes: 65536,
            warmup: 1,
            repeats: 3,
            args: [{ buffer: 'x' }, { scalar: { type: 'i32', value: 4 } }],
          },
        ],
      }),
    ),
  );
  assert.match(text, /CHECK\(cudaFuncSetAttribute\(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536\)\);/);
  assert.match(text, /for \(int r = 0; r < 4; \+\+r\)/);
  assert.match(text, /cudaLaunchKernel\(fn, grid, block, args, 65536u, 0\)/);
});

test('scalars of every element type carry the exact bytes the workbench passes', () => {
  assert.equal(scalarExpression('f16', 1), '__half(__half_raw{0x3c00}) /* 1 */');
  assert.equal(scalarExpression('bf16', 1), '__nv_bfloat16(__nv_bfloat16_raw{0x3f80}) /* 1 */');
  assert.equal(scalarExpression('f32', 0.1), '0.100000001f');
  assert.equal(scalarExpression('f64', 0.1), '0.10000000000000001');
  assert.equal(scalarExpression('i64', '-9007199254740993'), 'INT64_C(-9007199254740993)');
  assert.equal(scalarExpression('u64', '18446744073709551615'), 'UINT64_C(18446744073709551615)');
  assert.equal(scalarExpression('i32', -2147483648), 'INT32_MIN');
  assert.equal(scalarExpression('u8', 255), 'uint8_t(255)');
});

test('repro/ holds the source, a Makefile and CMakeLists.txt for the bundle device, and a README on compute-sanitizer', () => {
  const files = generateRepro(plan(), { arch: 'sm_86' });
  assert.deepEqual([...files.keys()].sort(), ['repro/CMakeLists.txt', 'repro/Makefile', 'repro/README.md', 'repro/repro.cu']);
  assert.match(files.get('repro/Makefile')!, /^ARCH \?= sm_86$/m);
  assert.match(files.get('repro/Makefile')!, /\$\(NVCC\) \$\(NVCCFLAGS\) -arch=\$\(ARCH\)/);
  assert.match(files.get('repro/Makefile')!, /-lineinfo/);
  assert.match(files.get('repro/CMakeLists.txt')!, /set\(CMAKE_CUDA_ARCHITECTURES 86\)/);
  assert.match(files.get('repro/README.md')!, /compute-sanitizer --tool memcheck \.\/repro/);
  assert.match(generateRepro(plan()).get('repro/Makefile')!, /^ARCH \?= native$/m);
});

test('text from the plan in comments stays in its comment: a line break in a source name or origin runs nothing', () => {
  const hostile = 'scale.cu\nint injected = system("touch /tmp/pwned");\n//';
  const text = generateRepro(plan({ kernels: [{ id: 'k', entry: 'k', source: SOURCE, sourceName: hostile }] }), { origin: 'a\nsystem("id");' }).get(
    'repro/repro.cu',
  )!;
  for (const line of text.split('\n')) if (/system\(/.test(line)) assert.match(line, /^\/\/|^#line /, line);
});
