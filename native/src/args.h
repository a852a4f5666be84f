// Validation of JS arguments at the addon boundary: every wrong type or out-of-range value becomes a
// TypeError/RangeError naming the argument, never undefined behaviour in C++.
#pragma once
#include <napi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace args {

inline Napi::Object object(const Napi::CallbackInfo& info, size_t index, const char* what) {
  if (info.Length() <= index || !info[index].IsObject())
    throw Napi::TypeError::New(info.Env(), std::string(what) + " must be an object");
  return info[index].As<Napi::Object>();
}

inline double number(Napi::Env env, Napi::Value value, const char* what, double min, double max) {
  if (!value.IsNumber()) throw Napi::TypeError::New(env, std::string(what) + " must be a number");
  double n = value.As<Napi::Number>().DoubleValue();
  if (!(n >= min && n <= max) || n != static_cast<double>(static_cast<long long>(n)))
    throw Napi::RangeError::New(env, std::string(what) + " must be an integer in [" + std::to_string(static_cast<long long>(min)) +
                                         ", " + std::to_string(static_cast<long long>(max)) + "]");
  return n;
}

inline uint64_t bigint(Napi::Env env, Napi::Value value, const char* what) {
  if (!value.IsBigInt()) throw Napi::TypeError::New(env, std::string(what) + " must be a bigint");
  bool lossless = false;
  uint64_t n = value.As<Napi::BigInt>().Uint64Value(&lossless);
  if (!lossless) throw Napi::RangeError::New(env, std::string(what) + " must fit in 64 bits");
  return n;
}

inline std::string string(Napi::Env env, Napi::Value value, const char* what) {
  if (!value.IsString()) throw Napi::TypeError::New(env, std::string(what) + " must be a string");
  return value.As<Napi::String>().Utf8Value();
}

inline std::vector<std::string> strings(Napi::Env env, Napi::Value value, const char* what) {
  std::vector<std::string> out;
  if (value.IsUndefined()) return out;
  if (!value.IsArray()) throw Napi::TypeError::New(env, std::string(what) + " must be an array of strings");
  Napi::Array array = value.As<Napi::Array>();
  for (uint32_t i = 0; i < array.Length(); i++) out.push_back(string(env, array.Get(i), what));
  return out;
}

inline Napi::Buffer<uint8_t> buffer(Napi::Env env, Napi::Value value, const char* what) {
  if (!value.IsBuffer()) throw Napi::TypeError::New(env, std::string(what) + " must be a Buffer");
  return value.As<Napi::Buffer<uint8_t>>();
}

}  // namespace args
