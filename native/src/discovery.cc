// loadLibraries({ cuda, nvrtc, nvml }: Array<{ path, source }>) -> report of what was found where.
// dlopen and version queries cannot fault and take milliseconds, so this runs on the JS thread.
#include <napi.h>

#include "args.h"
#include "loader.h"

namespace {

std::vector<Candidate> readCandidates(Napi::Env env, Napi::Object spec, const char* key) {
  std::vector<Candidate> out;
  Napi::Value value = spec.Get(key);
  if (value.IsUndefined()) return out;
  if (!value.IsArray()) throw Napi::TypeError::New(env, std::string(key) + " must be an array of candidates");
  Napi::Array array = value.As<Napi::Array>();
  for (uint32_t i = 0; i < array.Length(); i++) {
    if (!array.Get(i).IsObject()) throw Napi::TypeError::New(env, std::string(key) + " candidates must be objects");
    Napi::Object c = array.Get(i).As<Napi::Object>();
    out.push_back({args::string(env, c.Get("path"), "candidate.path"), args::string(env, c.Get("source"), "candidate.source")});
  }
  return out;
}

Napi::Object report(Napi::Env env, const LibraryState& state) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("loaded", state.loaded);
  out.Set("path", state.loaded ? Napi::Value(Napi::String::New(env, state.path)) : env.Null());
  out.Set("source", state.loaded ? Napi::Value(Napi::String::New(env, state.source)) : env.Null());
  Napi::Array attempts = Napi::Array::New(env, state.attempts.size());
  for (size_t i = 0; i < state.attempts.size(); i++) {
    Napi::Object a = Napi::Object::New(env);
    a.Set("candidate", state.attempts[i].candidate);
    a.Set("source", state.attempts[i].source);
    a.Set("error", state.attempts[i].error.empty() ? env.Null() : Napi::String::New(env, state.attempts[i].error));
    attempts.Set(i, a);
  }
  out.Set("attempts", attempts);
  auto list = [&](const std::vector<std::string>& names) {
    Napi::Array a = Napi::Array::New(env, names.size());
    for (size_t i = 0; i < names.size(); i++) a.Set(i, names[i]);
    return a;
  };
  out.Set("missingRequired", list(state.missingRequired));
  out.Set("missingOptional", list(state.missingOptional));
  return out;
}

}  // namespace

Napi::Value LoadLibraries(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object spec = args::object(info, 0, "candidates");
  const LibraryState& driver = loadLibrary(Library::Driver, readCandidates(env, spec, "cuda"));
  const LibraryState& compiler = loadLibrary(Library::Nvrtc, readCandidates(env, spec, "nvrtc"));
  const LibraryState& monitor = loadLibrary(Library::Nvml, readCandidates(env, spec, "nvml"));

  Napi::Object out = Napi::Object::New(env);
  Napi::Object cuda = report(env, driver);
  if (driver.loaded) {
    int version = 0;
    cuda.Set("version", cu.cuDriverGetVersion(&version) == CUDA_SUCCESS ? Napi::Value(Napi::Number::New(env, version))
                                                                        : env.Null());
  }
  out.Set("cuda", cuda);
  Napi::Object nvrtcReport = report(env, compiler);
  if (compiler.loaded) {
    int major = 0, minor = 0;
    if (nvrtc.nvrtcVersion(&major, &minor) == 0) {
      nvrtcReport.Set("version", Napi::Number::New(env, major * 1000 + minor * 10));
    }
    int count = 0;
    if (nvrtc.nvrtcGetNumSupportedArchs && nvrtc.nvrtcGetSupportedArchs &&
        nvrtc.nvrtcGetNumSupportedArchs(&count) == 0 && count > 0) {
      std::vector<int> archs(count);
      if (nvrtc.nvrtcGetSupportedArchs(archs.data()) == 0) {
        Napi::Array a = Napi::Array::New(env, count);
        for (int i = 0; i < count; i++) a.Set(i, archs[i]);
        nvrtcReport.Set("supportedArchs", a);
      }
    }
  }
  out.Set("nvrtc", nvrtcReport);
  out.Set("nvml", report(env, monitor));
  return out;
}
