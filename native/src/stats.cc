// floatSums(bytes, isF64, out) -> undefined: the minimum, maximum and sum of a read-back's f32 or f64 elements into
// out[0..2], by the same four-lane loop as core/plan/buffer-data.ts's floatStats (the same comparisons, the same
// additions in the same order, in doubles), so the answer is that loop's to the bit. A sum that is not finite means a
// NaN or an Inf was met: the caller then counts them with its careful loop. Synchronous: a few microseconds a
// megabyte, where V8's loop takes a few hundred.
#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {
template <typename T>
void sums(const uint8_t* bytes, size_t n, double* out) {
  double min0 = __builtin_inf(), min1 = __builtin_inf(), max0 = -__builtin_inf(), max1 = -__builtin_inf();
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  T v[4];
  for (; i + 3 < n; i += 4) {
    std::memcpy(v, bytes + i * sizeof(T), sizeof v);  // any alignment
    const double a = v[0], b = v[1], c = v[2], d = v[3];
    s0 += a;
    s1 += b;
    s2 += c;
    s3 += d;
    const double lowAB = b < a ? b : a;
    const double highAB = b > a ? b : a;
    const double lowCD = d < c ? d : c;
    const double highCD = d > c ? d : c;
    min0 = lowAB < min0 ? lowAB : min0;
    min1 = lowCD < min1 ? lowCD : min1;
    max0 = highAB > max0 ? highAB : max0;
    max1 = highCD > max1 ? highCD : max1;
  }
  double sum = s0 + s1 + (s2 + s3);
  double min = min1 < min0 ? min1 : min0;
  double max = max1 > max0 ? max1 : max0;
  for (; i < n; i++) {
    T one;
    std::memcpy(&one, bytes + i * sizeof(T), sizeof one);
    const double x = one;
    min = x < min ? x : min;
    max = x > max ? x : max;
    sum += x;
  }
  out[0] = min;
  out[1] = max;
  out[2] = sum;
}
}  // namespace

Napi::Value FloatSums(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsTypedArray() || !info[2].IsTypedArray())
    throw Napi::TypeError::New(env, "floatSums(bytes: Uint8Array, isF64: boolean, out: Float64Array)");
  auto bytes = info[0].As<Napi::TypedArray>();
  auto out = info[2].As<Napi::TypedArray>();
  if (bytes.TypedArrayType() != napi_uint8_array || out.TypedArrayType() != napi_float64_array || out.ElementLength() < 3)
    throw Napi::TypeError::New(env, "floatSums: bytes must be a Uint8Array and out a Float64Array of 3");
  const bool f64 = info[1].ToBoolean().Value();
  const auto* data = static_cast<const uint8_t*>(bytes.ArrayBuffer().Data()) + bytes.ByteOffset();
  auto* dest = reinterpret_cast<double*>(static_cast<uint8_t*>(out.ArrayBuffer().Data()) + out.ByteOffset());
  const size_t length = bytes.ByteLength();
  if (f64)
    sums<double>(data, length / sizeof(double), dest);
  else
    sums<float>(data, length / sizeof(float), dest);
  return env.Undefined();
}
