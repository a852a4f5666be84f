// nvrtcCompile({ source, name, options, nameExpressions }) -> Promise<{ ok, log, ptx, cubin, lowered }>.
// A compile error is a result (ok: false, with the log), not an exception; NVRTC failing to run is.
#include <napi.h>

#include "args.h"
#include "async.h"
#include "loader.h"

namespace {
struct CompileOutput {
  bool ok = false;
  std::string log, ptx;
  std::vector<char> cubin;
  bool hasCubin = false;
  std::vector<std::pair<std::string, std::string>> lowered;
};
}  // namespace

Napi::Value NvrtcCompile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object spec = args::object(info, 0, "compile");
  std::string source = args::string(env, spec.Get("source"), "source");
  std::string name = args::string(env, spec.Get("name"), "name");
  std::vector<std::string> options = args::strings(env, spec.Get("options"), "options");
  std::vector<std::string> expressions = args::strings(env, spec.Get("nameExpressions"), "nameExpressions");
  auto out = std::make_shared<CompileOutput>();

  auto execute = [=](Failure& failure) {
    if (!libraryState(Library::Nvrtc).loaded) {
      failure.failed = true;
      failure.library = "nvrtc";
      failure.api = "nvrtcCreateProgram";
      failure.code = -1;
      failure.name = "WORKBENCH_NVRTC_NOT_LOADED";
      failure.message = "NVRTC (libnvrtc.so) is not loaded";
      return;
    }
    nvrtcProgram program = nullptr;
    if (!checkNvrtc(failure, "nvrtcCreateProgram",
                    nvrtc.nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr)))
      return;
    struct Guard {
      nvrtcProgram* p;
      ~Guard() { nvrtc.nvrtcDestroyProgram(p); }
    } guard{&program};
    if (nvrtc.nvrtcAddNameExpression)
      for (const auto& e : expressions) nvrtc.nvrtcAddNameExpression(program, e.c_str());
    std::vector<const char*> optionPointers;
    for (const auto& o : options) optionPointers.push_back(o.c_str());
    nvrtcResult result = nvrtc.nvrtcCompileProgram(program, static_cast<int>(optionPointers.size()),
                                                   optionPointers.empty() ? nullptr : optionPointers.data());
    size_t logSize = 0;
    if (nvrtc.nvrtcGetProgramLogSize(program, &logSize) == 0 && logSize > 1) {
      std::string log(logSize, '\0');
      if (nvrtc.nvrtcGetProgramLog(program, log.data()) == 0) out->log = log.c_str();
    }
    constexpr nvrtcResult NVRTC_ERROR_COMPILATION = 6;
    if (result == NVRTC_ERROR_COMPILATION) return;  // ok stays false; the log says why
    if (!checkNvrtc(failure, "nvrtcCompileProgram", result)) return;
    size_t ptxSize = 0;
    if (!checkNvrtc(failure, "nvrtcGetPTXSize", nvrtc.nvrtcGetPTXSize(program, &ptxSize))) return;
    std::string ptx(ptxSize, '\0');
    if (!checkNvrtc(failure, "nvrtcGetPTX", nvrtc.nvrtcGetPTX(program, ptx.data()))) return;
    out->ptx = ptx.c_str();
    size_t cubinSize = 0;
    // NVRTC only produces a CUBIN for a real architecture (sm_XX); for compute_XX it is PTX only.
    if (nvrtc.nvrtcGetCUBINSize && nvrtc.nvrtcGetCUBINSize(program, &cubinSize) == 0 && cubinSize > 0) {
      out->cubin.resize(cubinSize);
      out->hasCubin = nvrtc.nvrtcGetCUBIN(program, out->cubin.data()) == 0;
    }
    if (nvrtc.nvrtcGetLoweredName)
      for (const auto& e : expressions) {
        const char* lowered = nullptr;
        if (nvrtc.nvrtcGetLoweredName(program, e.c_str(), &lowered) == 0 && lowered) out->lowered.push_back({e, lowered});
      }
    out->ok = true;
  };
  auto resolve = [out](Napi::Env env) -> Napi::Value {
    Napi::Object o = Napi::Object::New(env);
    o.Set("ok", out->ok);
    o.Set("log", out->log);
    o.Set("ptx", out->ok ? Napi::Value(Napi::String::New(env, out->ptx)) : env.Null());
    o.Set("cubin", out->hasCubin ? Napi::Value(Napi::Buffer<char>::Copy(env, out->cubin.data(), out->cubin.size()))
                                 : env.Null());
    Napi::Object lowered = Napi::Object::New(env);
    for (const auto& [e, l] : out->lowered) lowered.Set(e, l);
    o.Set("lowered", lowered);
    return o;
  };
  return PromiseWorker::Start(env, execute, resolve);
}
