import { definesHeader } from '../compile/compile-options';
import { defaultTolerance, describeExpectation } from '../plan/compare';
import { isFloatType, writeElement, type ElementType } from '../plan/element-types';
import { bytesOf, type BufferSpec, type Initializer, type KernelArg, type LaunchPlan, type Step } from '../plan/plan-schema';

/**
 * A standalone repro/ (repro.cu, Makefile, CMakeLists.txt, README.md) generated from a resolved plan: the
 * same buffers, filled with the same bytes, the same launches in the same order, every CUDA call checked.
 * It needs nvcc alone (ARCHITECTURE.md §5). What the runner adds on top (guard bytes around buffers,
 * determinism re-runs) has no place in a bare host program and is left out, said so in the file.
 */

export interface ReproOptions {
  /** nvcc's -arch, from the bundle's device (sm_90); `native` when not known. */
  arch?: string;
  /** A line naming where the plan came from, for the header comment. */
  origin?: string;
}

const CTYPE: Record<ElementType, string> = {
  i8: 'int8_t',
  u8: 'uint8_t',
  i16: 'int16_t',
  u16: 'uint16_t',
  i32: 'int32_t',
  u32: 'uint32_t',
  i64: 'int64_t',
  u64: 'uint64_t',
  f16: '__half',
  bf16: '__nv_bfloat16',
  f32: 'float',
  f64: 'double',
};

const TYPE_ENUM = (t: ElementType) => `T_${t.toUpperCase()}`;

/** A double literal C++ reads back as exactly this number (17 significant digits round-trip). */
export function doubleLiteral(v: number): string {
  if (Number.isNaN(v)) return 'NAN';
  if (!Number.isFinite(v)) return v > 0 ? 'INFINITY' : '(-INFINITY)';
  if (Number.isInteger(v) && Math.abs(v) < 2 ** 53) return `${v}.0`;
  return v.toPrecision(17);
}

const cString = (s: string) => JSON.stringify(s).replace(/\?/g, '\\?');

/** A C++ expression of this scalar's type holding exactly the bytes the workbench passes. */
export function scalarExpression(type: ElementType, value: number | string): string {
  const bytes = new Uint8Array(8);
  const view = new DataView(bytes.buffer);
  const v = typeof value === 'string' ? BigInt(value) : value;
  writeElement(view, 0, type, typeof v === 'bigint' && type !== 'i64' && type !== 'u64' ? Number(v) : v);
  switch (type) {
    case 'f16':
      return `__half(__half_raw{0x${view.getUint16(0, true).toString(16).padStart(4, '0')}}) /* ${value} */`;
    case 'bf16':
      return `__nv_bfloat16(__nv_bfloat16_raw{0x${view.getUint16(0, true).toString(16).padStart(4, '0')}}) /* ${value} */`;
    case 'f32': {
      const f = view.getFloat32(0, true);
      return Number.isFinite(f) ? `${Number.isInteger(f) ? `${f}.0` : f.toPrecision(9)}f` : `float(${doubleLiteral(f)})`;
    }
    case 'f64':
      return doubleLiteral(view.getFloat64(0, true));
    case 'i64':
      return `INT64_C(${view.getBigInt64(0, true) === -(2n ** 63n) ? '-9223372036854775807) - 1' : `${view.getBigInt64(0, true)})`}`;
    case 'u64':
      return `UINT64_C(${view.getBigUint64(0, true)})`;
    case 'i8':
      return `int8_t(${view.getInt8(0)})`;
    case 'u8':
      return `uint8_t(${view.getUint8(0)})`;
    case 'i16':
      return `int16_t(${view.getInt16(0, true)})`;
    case 'u16':
      return `uint16_t(${view.getUint16(0, true)})`;
    case 'i32':
      return view.getInt32(0, true) === -(2 ** 31) ? 'INT32_MIN' : `int32_t(${view.getInt32(0, true)})`;
    case 'u32':
      return `uint32_t(${view.getUint32(0, true)}u)`;
  }
}

/** The C++ that fills host bytes `h` (of `count` elements) as core/plan/buffer-data.ts initialBytes does. */
export function initializerCode(buffer: BufferSpec, init: Initializer, h: string): string[] {
  const t = TYPE_ENUM(buffer.type);
  const n = `(size_t)${buffer.count}ull`;
  switch (init.kind) {
    case 'zeros':
      return [`  // zeros`, `  std::memset(${h}.data(), 0, ${h}.size());`];
    case 'constant':
      return [`  // constant ${init.value}`, `  for (size_t i = 0; i < ${n}; ++i) store_element(${t}, ${h}.data(), i, ${doubleLiteral(init.value)});`];
    case 'iota':
      return [
        `  // iota: start ${init.start}, step ${init.step}`,
        `  for (size_t i = 0; i < ${n}; ++i) store_element(${t}, ${h}.data(), i, ${doubleLiteral(init.start)} + (double)i * ${doubleLiteral(init.step)});`,
      ];
    case 'random': {
      const integer = !isFloatType(buffer.type);
      return [
        `  // random: mulberry32(seed ${init.seed}) in [${init.min}, ${init.max})${integer ? ', floored' : ''}, as the workbench draws it`,
        `  {`,
        `    Mulberry32 rng(${init.seed}u);`,
        `    const double lo = ${doubleLiteral(init.min)}, span = ${doubleLiteral(init.max)} - ${doubleLiteral(init.min)};`,
        `    for (size_t i = 0; i < ${n}; ++i) {`,
        `      const double r = lo + rng.next() * span;`,
        `      store_element(${t}, ${h}.data(), i, ${integer ? 'std::floor(r)' : 'r'});`,
        `    }`,
        `  }`,
      ];
    }
    case 'file':
      return [
        `  // raw little-endian elements from a file on the machine that ran the plan: put it beside the program`,
        `  // (or set REPRO_DATA_DIR to its folder); the bundle does not carry data files.`,
        `  read_file_bytes(${cString(init.path)}, ${init.offsetBytes}ull, ${h});`,
      ];
  }
}

function argCode(arg: KernelArg, index: number, step: number): { decl: string; ref: string } {
  if ('buffer' in arg) return { decl: '', ref: `&d_${arg.buffer}` };
  const name = `s${step}_a${index}`;
  return { decl: `    ${CTYPE[arg.scalar.type]} ${name} = ${scalarExpression(arg.scalar.type, arg.scalar.value)};`, ref: `&${name}` };
}

const PRELUDE = `#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

// Every CUDA call goes through CHECK: on an error it prints the call, where it is, the error's name and
// description, and exits non-zero.
#define CHECK(call)                                                                                     \\
  do {                                                                                                  \\
    cudaError_t err_ = (call);                                                                          \\
    if (err_ != cudaSuccess) {                                                                          \\
      std::fprintf(stderr, "repro: %s failed at %s:%d: %s (%d): %s\\n", #call, __FILE__, __LINE__,     \\
                   cudaGetErrorName(err_), (int)err_, cudaGetErrorString(err_));                       \\
      std::exit(1);                                                                                     \\
    }                                                                                                   \\
  } while (0)
`;

const HOST_HELPERS = `
// ---- host helpers: the same element conversions and PRNG as the workbench (core/plan) ----
namespace repro {
enum ElementType { T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_I64, T_U64, T_F16, T_BF16, T_F32, T_F64 };

// JavaScript's integer conversion: truncate, wrap modulo 2^64 (NaN and infinities give 0).
inline uint64_t wrap_u64(double v) {
  if (!std::isfinite(v)) return 0;
  v = std::trunc(v);
  const double two64 = 18446744073709551616.0;
  v = std::fmod(v, two64);  // now in (-2^64, 2^64), exactly
  if (v < 0) return (uint64_t)0 - (uint64_t)(-v);
  return (uint64_t)v;
}

// As core/plan/element-types.ts f32ToF16Bits: from the double, round half up.
inline uint16_t f16_bits(double value) {
  if (std::isnan(value)) return 0x7e00;
  const uint16_t sign = (value < 0 || (value == 0 && std::signbit(value))) ? 0x8000 : 0;
  const double a = std::fabs(value);
  if (a >= 65520) return sign | 0x7c00;
  if (a < std::ldexp(1.0, -24) / 2) return sign;
  if (a < std::ldexp(1.0, -14)) return sign | (uint16_t)std::floor(a / std::ldexp(1.0, -24) + 0.5);
  int exponent = (int)std::floor(std::log2(a));
  double m = std::floor((a / std::ldexp(1.0, exponent) - 1) * 1024 + 0.5);
  if (m == 1024) { m = 0; exponent += 1; }
  return sign | (uint16_t)((exponent + 15) << 10) | (uint16_t)m;
}

// Round to nearest even, as __float2bfloat16_rn does (from the value rounded to float first).
inline uint16_t bf16_bits(double value) {
  const float f = (float)value;
  if (std::isnan(f)) return 0x7fc0;
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return (uint16_t)(((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16) & 0xffffu);
}

inline double f16_value(uint16_t bits) {
  const double sign = (bits & 0x8000) ? -1 : 1;
  const int e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
  if (e == 0) return sign * m * std::ldexp(1.0, -24);
  if (e == 31) return m ? NAN : sign * INFINITY;
  return sign * (1 + m / 1024.0) * std::ldexp(1.0, e - 15);
}

inline double bf16_value(uint16_t bits) {
  const uint32_t b = (uint32_t)bits << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

inline size_t element_size(ElementType t) {
  switch (t) {
    case T_I8: case T_U8: return 1;
    case T_I16: case T_U16: case T_F16: case T_BF16: return 2;
    case T_I32: case T_U32: case T_F32: return 4;
    default: return 8;
  }
}

// Element i of little-endian host bytes p, written from a double as the workbench writes it.
inline void store_element(ElementType t, unsigned char* p, size_t i, double v) {
  unsigned char* at = p + i * element_size(t);
  switch (t) {
    case T_I8: case T_U8: { uint8_t x = (uint8_t)wrap_u64(v); std::memcpy(at, &x, 1); break; }
    case T_I16: case T_U16: { uint16_t x = (uint16_t)wrap_u64(v); std::memcpy(at, &x, 2); break; }
    case T_I32: case T_U32: { uint32_t x = (uint32_t)wrap_u64(v); std::memcpy(at, &x, 4); break; }
    case T_I64: case T_U64: { uint64_t x = wrap_u64(v); std::memcpy(at, &x, 8); break; }
    case T_F16: { uint16_t x = f16_bits(v); std::memcpy(at, &x, 2); break; }
    case T_BF16: { uint16_t x = bf16_bits(v); std::memcpy(at, &x, 2); break; }
    case T_F32: { float x = (float)v; std::memcpy(at, &x, 4); break; }
    case T_F64: std::memcpy(at, &v, 8); break;
  }
}

inline double load_element(ElementType t, const unsigned char* p, size_t i) {
  const unsigned char* at = p + i * element_size(t);
  switch (t) {
    case T_I8: { int8_t x; std::memcpy(&x, at, 1); return x; }
    case T_U8: { uint8_t x; std::memcpy(&x, at, 1); return x; }
    case T_I16: { int16_t x; std::memcpy(&x, at, 2); return x; }
    case T_U16: { uint16_t x; std::memcpy(&x, at, 2); return x; }
    case T_I32: { int32_t x; std::memcpy(&x, at, 4); return x; }
    case T_U32: { uint32_t x; std::memcpy(&x, at, 4); return x; }
    case T_I64: { int64_t x; std::memcpy(&x, at, 8); return (double)x; }
    case T_U64: { uint64_t x; std::memcpy(&x, at, 8); return (double)x; }
    case T_F16: { uint16_t x; std::memcpy(&x, at, 2); return f16_value(x); }
    case T_BF16: { uint16_t x; std::memcpy(&x, at, 2); return bf16_value(x); }
    case T_F32: { float x; std::memcpy(&x, at, 4); return x; }
    case T_F64: { double x; std::memcpy(&x, at, 8); return x; }
  }
  return 0;
}

// What the element type makes of v: expected values are compared after the same rounding.
inline double round_to(ElementType t, double v) {
  unsigned char tmp[8];
  store_element(t, tmp, 0, v);
  return load_element(t, tmp, 0);
}

// Mulberry32, as core/plan/buffer-data.ts: uniform in [0, 1).
struct Mulberry32 {
  uint32_t a;
  explicit Mulberry32(uint32_t seed) : a(seed) {}
  double next() {
    a += 0x6d2b79f5u;
    uint32_t t = a;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return (double)(t ^ (t >> 14)) / 4294967296.0;
  }
};

inline void read_file_bytes(const char* path, unsigned long long offset, std::vector<unsigned char>& out) {
  std::string full = path;
  if (const char* dir = std::getenv("REPRO_DATA_DIR")) {
    const char* slash = std::strrchr(path, '/');
    full = std::string(dir) + "/" + (slash ? slash + 1 : path);
  }
  FILE* f = std::fopen(full.c_str(), "rb");
  if (!f || std::fseek(f, (long)offset, SEEK_SET) != 0 || std::fread(out.data(), 1, out.size(), f) != out.size()) {
    std::fprintf(stderr, "repro: cannot read %zu bytes at offset %llu of %s\\n", out.size(), offset, full.c_str());
    std::exit(2);
  }
  std::fclose(f);
}

// Compares read-back bytes with expected(i); prints the first mismatch and returns false when one differs.
template <typename Expected>
inline bool compare(const char* name, const char* against, ElementType t, const std::vector<unsigned char>& got, size_t count,
                    Expected expected, double abs_tol, double rel_tol, bool exact) {
  size_t mismatches = 0, first = 0;
  double first_e = 0, first_a = 0;
  for (size_t i = 0; i < count; ++i) {
    const double a = load_element(t, got.data(), i), e = expected(i);
    bool equal;
    if (std::isnan(a) || std::isnan(e)) equal = std::isnan(a) && std::isnan(e);
    else if (a == e) equal = true;
    else equal = exact ? false : std::fabs(a - e) <= abs_tol + rel_tol * std::fabs(e);
    if (!equal && mismatches++ == 0) { first = i; first_e = e; first_a = a; }
  }
  if (mismatches) {
    std::fprintf(stderr, "repro: %s differs from %s at %zu of %zu elements; first at index %zu: expected %.9g, got %.9g\\n", name, against,
                 mismatches, count, first, first_e, first_a);
    return false;
  }
  std::printf("repro: %s matches %s (%zu elements)\\n", name, against, count);
  return true;
}
}  // namespace repro
using namespace repro;
`;

/** Text from the plan in a // comment: a line break would end the comment and make the rest code. */
const oneLine = (text: string) => text.replace(/[\r\n\u2028\u2029]+/g, ' ');

interface ReproContext {
  buffers: Map<string, BufferSpec>;
  kernels: Map<string, LaunchPlan['kernels'][number]>;
  poison: boolean;
}

/** Each kernel source in the plan's order, with the flags it was compiled with; one text shared by several, once. */
function kernelSources(plan: LaunchPlan): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const kernel of plan.kernels) {
    const defines = definesHeader(kernel.options.defines ?? []);
    const key = defines + kernel.source;
    if (seen.has(key)) {
      out.push(`// kernel "${kernel.id}" (${kernel.entry}) is in ${oneLine(kernel.sourceName)}, inlined above.`, '');
      continue;
    }
    seen.add(key);
    const flags = [
      kernel.options.maxRegisters ? `-maxrregcount=${kernel.options.maxRegisters}` : null,
      kernel.options.fastMath ? '-use_fast_math' : null,
      kernel.options.debug ? '-G' : null,
    ].filter((f): f is string => f !== null);
    out.push(`// ===== ${oneLine(kernel.sourceName)}: kernel "${kernel.id}" (${kernel.entry}) =====`);
    if (flags.length) out.push(`// The workbench compiled it with ${flags.join(' ')}: add them to NVCCFLAGS to match.`);
    if (defines) out.push(defines.trimEnd());
    out.push(`#line 1 ${cString(kernel.sourceName)}`, kernel.source.trimEnd(), `// ===== end of ${oneLine(kernel.sourceName)} =====`, '');
  }
  return out;
}

/** One function per initialised buffer, returning its host bytes. */
function initializers(plan: LaunchPlan): string[] {
  const out: string[] = [];
  for (const b of plan.buffers) {
    if (!b.init) continue;
    out.push(`// Host bytes of buffer ${b.name} (${b.count} × ${b.type}), as the workbench fills it before upload.`);
    out.push(`static std::vector<unsigned char> init_${b.name}() {`, `  std::vector<unsigned char> h(${bytesOf(b)}ull);`);
    out.push(...initializerCode(b, b.init, 'h'), `  return h;`, `}`, '');
  }
  return out;
}

function launchCode(step: Extract<Step, { op: 'launch' }>, index: number, ctx: ReproContext): string[] {
  const kernel = ctx.kernels.get(step.kernel)!;
  const args = step.args.map((a, i) => argCode(a, i, index + 1));
  const times = step.warmup + step.repeats;
  const out = [`  {`, ...args.map((a) => a.decl).filter(Boolean)];
  out.push(`    void* args[] = {${args.map((a) => a.ref).join(', ') || 'nullptr'}};`);
  out.push(`    const void* fn = reinterpret_cast<const void*>(&${kernel.entry});`);
  if (step.sharedBytes > 48 * 1024)
    out.push(
      `    // Above 48 KiB of dynamic shared memory a kernel must opt in, as the workbench does.`,
      `    CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, ${step.sharedBytes}));`,
    );
  const [gx, gy, gz] = step.grid;
  const [bx, by, bz] = step.block;
  out.push(`    const dim3 grid(${gx}u, ${gy}u, ${gz}u), block(${bx}u, ${by}u, ${bz}u);`);
  const launch = [
    `CHECK(cudaLaunchKernel(fn, grid, block, ${step.args.length ? 'args' : 'nullptr'}, ${step.sharedBytes}u, 0));`,
    `CHECK(cudaDeviceSynchronize());`,
  ];
  if (times === 1) out.push(...launch.map((l) => `    ${l}`));
  else out.push(`    for (int r = 0; r < ${times}; ++r) {  // ${step.warmup} warm-up + ${step.repeats} timed`, ...launch.map((l) => `      ${l}`), `    }`);
  out.push(`  }`);
  return out;
}

function downloadCode(step: Extract<Step, { op: 'download' }>, ctx: ReproContext): string[] {
  const b = ctx.buffers.get(step.buffer)!;
  const out = [
    `  back_${b.name}.resize(${bytesOf(b)}ull);`,
    `  CHECK(cudaMemcpy(back_${b.name}.data(), d_${b.name}, back_${b.name}.size(), cudaMemcpyDeviceToHost));`,
  ];
  if (!step.expect) return out;
  const tol = { ...defaultTolerance(b.type), ...step.tolerance };
  const exact = !isFloatType(b.type) && !(step.tolerance && (step.tolerance.abs > 0 || step.tolerance.rel > 0));
  const t = TYPE_ENUM(b.type);
  const e = step.expect;
  const expected =
    e.kind === 'constant'
      ? `[](size_t) { return round_to(${t}, ${doubleLiteral(e.value)}); }`
      : e.kind === 'iota'
        ? `[](size_t i) { return round_to(${t}, ${doubleLiteral(e.start)} + (double)i * ${doubleLiteral(e.step)}); }`
        : `[&](size_t i) { return load_element(${TYPE_ENUM(ctx.buffers.get(e.buffer)!.type)}, back_${e.buffer}.data(), i); }`;
  out.push(
    `  ok = compare(${cString(b.name)}, ${cString(describeExpectation(e))}, ${t}, back_${b.name}, ${b.count}ull, ${expected}, ${doubleLiteral(tol.abs)}, ${doubleLiteral(tol.rel)}, ${exact}) && ok;`,
  );
  return out;
}

/** The host code of one step of the plan. */
function stepCode(step: Step, index: number, ctx: ReproContext): string[] {
  switch (step.op) {
    case 'alloc': {
      const b = ctx.buffers.get(step.buffer)!;
      const alloc = `  CHECK(cudaMalloc((void**)&d_${b.name}, ${bytesOf(b)}ull));`;
      if (!ctx.poison) return [alloc];
      return [
        alloc,
        `  // The workbench poisons every new allocation with 0xFF bytes (NaN for floats, -1 for integers), so a read`,
        `  // of memory never written shows; cudaMalloc alone would leave whatever was there.`,
        `  CHECK(cudaMemset(d_${b.name}, 0xFF, ${bytesOf(b)}ull));`,
      ];
    }
    case 'upload': {
      const b = ctx.buffers.get(step.buffer)!;
      return [
        `  {`,
        `    const std::vector<unsigned char> h = init_${b.name}();`,
        `    CHECK(cudaMemcpy(d_${b.name}, h.data(), h.size(), cudaMemcpyHostToDevice));`,
        `  }`,
      ];
    }
    case 'launch':
      return launchCode(step, index, ctx);
    case 'sync':
      return [`  CHECK(cudaDeviceSynchronize());`];
    case 'download':
      return downloadCode(step, ctx);
    case 'free':
      return [`  CHECK(cudaFree(d_${step.buffer}));`, `  d_${step.buffer} = nullptr;`];
  }
}

/** The repro.cu text for a resolved plan. */
export function generateReproSource(plan: LaunchPlan, options: ReproOptions = {}): string {
  const out: string[] = [
    `// repro.cu — generated by GPU Workbench from a launch plan${options.origin ? ` (${oneLine(options.origin)})` : ''}.`,
    `// Build: nvcc -lineinfo -arch=${options.arch ?? 'native'} -o repro repro.cu   (or make / cmake; see README.md)`,
    `// It replays the plan with the CUDA runtime alone: the same buffers and bytes, the same launches in order.`,
    `// Not reproduced: the guard bytes the workbench keeps around each buffer (an out-of-bounds write that lands`,
    `// in them shows there, not here: run this under compute-sanitizer) and its determinism re-runs.`,
    '',
    PRELUDE,
    ...kernelSources(plan),
    '#line __REPRO_LINE__ "repro.cu"',
    HOST_HELPERS,
    ...initializers(plan),
  ];
  const ctx: ReproContext = {
    buffers: new Map(plan.buffers.map((b) => [b.name, b])),
    kernels: new Map(plan.kernels.map((k) => [k.id, k])),
    poison: plan.checks.poison,
  };
  out.push('int main() {', `  CHECK(cudaSetDevice(0));`, `  bool ok = true;`);
  for (const b of plan.buffers) out.push(`  ${CTYPE[b.type]}* d_${b.name} = nullptr;  // ${b.count} × ${b.type}`);
  for (const b of plan.buffers) out.push(`  std::vector<unsigned char> back_${b.name};  // its latest read-back`);
  out.push('');
  plan.steps.forEach((step: Step, index) => {
    out.push(`  // step ${index + 1}: ${step.op}${'buffer' in step ? ` ${step.buffer}` : step.op === 'launch' ? ` ${step.kernel}` : ''}`);
    out.push(...stepCode(step, index, ctx));
  });
  out.push(
    '',
    `  if (!ok) {`,
    `    std::fprintf(stderr, "repro: FAILED (a read-back differs from what the plan expects)\\n");`,
    `    return 3;`,
    `  }`,
    `  std::printf("repro: OK\\n");`,
    `  return 0;`,
    `}`,
    '',
  );
  // #line after the inlined sources: back to repro.cu's own numbering, so CHECK names the right line.
  const lines = out.join('\n').split('\n');
  const at = lines.findIndex((l) => l === '#line __REPRO_LINE__ "repro.cu"');
  lines[at] = `#line ${at + 2} "repro.cu"`;
  return lines.join('\n');
}

/** Every file of repro/, by its name inside the bundle. */
export function generateRepro(plan: LaunchPlan, options: ReproOptions = {}): Map<string, string> {
  const arch = options.arch ?? 'native';
  const files = new Map<string, string>();
  files.set('repro/repro.cu', generateReproSource(plan, { ...options, arch }));
  files.set(
    'repro/Makefile',
    [
      `# Builds the standalone repro with nvcc alone. Override the architecture: make ARCH=sm_80`,
      `NVCC ?= nvcc`,
      `ARCH ?= ${arch}`,
      `NVCCFLAGS ?= -lineinfo -std=c++17`,
      ``,
      `repro: repro.cu`,
      `\t$(NVCC) $(NVCCFLAGS) -arch=$(ARCH) -o $@ $<`,
      ``,
      `run: repro`,
      `\t./repro`,
      ``,
      `sanitize: repro`,
      `\tcompute-sanitizer --tool memcheck ./repro`,
      ``,
      `clean:`,
      `\trm -f repro`,
      ``,
      `.PHONY: run sanitize clean`,
      ``,
    ].join('\n'),
  );
  const cmakeArch = /^sm_(\d+[af]?)$/.exec(arch)?.[1] ?? 'native';
  files.set(
    'repro/CMakeLists.txt',
    [
      `cmake_minimum_required(VERSION 3.24)`,
      `project(repro LANGUAGES CXX CUDA)`,
      `# Override: cmake -DCMAKE_CUDA_ARCHITECTURES=80 ..`,
      `if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)`,
      `  set(CMAKE_CUDA_ARCHITECTURES ${cmakeArch})`,
      `endif()`,
      `set(CMAKE_CUDA_STANDARD 17)`,
      `add_executable(repro repro.cu)`,
      `target_compile_options(repro PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)`,
      ``,
    ].join('\n'),
  );
  files.set(
    'repro/README.md',
    [
      `# Standalone repro`,
      ``,
      `\`repro.cu\` replays this bundle's launch plan with the CUDA runtime alone: the same buffers filled with the same`,
      `bytes, the same kernels launched in the same order with the same grid, block and shared memory. Every CUDA call is`,
      `checked: the first that fails prints the call, its file:line, the error's name and description, and the program`,
      `exits 1. Read-backs the plan checks are compared (exit 3 and the first mismatch when one differs). A clean run`,
      `ends with \`repro: OK\`.`,
      ``,
      `## Build and run`,
      ``,
      '```sh',
      `make            # nvcc -lineinfo -arch=${arch}; another GPU: make ARCH=sm_80`,
      `./repro`,
      '```',
      ``,
      `or with CMake (3.24+):`,
      ``,
      '```sh',
      `cmake -B build && cmake --build build && ./build/repro`,
      '```',
      ``,
      `or by hand: \`nvcc -lineinfo -arch=${arch} -o repro repro.cu\`.`,
      ``,
      `## Under compute-sanitizer`,
      ``,
      '```sh',
      `make sanitize                                   # compute-sanitizer --tool memcheck ./repro`,
      `compute-sanitizer --tool racecheck ./repro      # shared-memory races`,
      `compute-sanitizer --tool initcheck ./repro      # reads of memory never written`,
      '```',
      ``,
      `\`-lineinfo\` lets the sanitizer name the kernel's source line.`,
      ``,
      `## What differs from the workbench`,
      ``,
      `- The workbench keeps guard bytes around every buffer: an out-of-bounds write that lands in them is reported`,
      `  there, but is silent here (it lands in other memory). Run it under compute-sanitizer to see it.`,
      `- New allocations are filled with 0xFF bytes (cudaMemset) as the workbench poisons them; cudaMalloc alone`,
      `  would leave whatever was there.`,
      `- Determinism re-runs are not repeated. Buffers read from a file need that file beside the program (or`,
      `  REPRO_DATA_DIR pointing at its folder).`,
      ``,
    ].join('\n'),
  );
  return files;
}
