// launch({ functionId, grid, block, sharedBytes, args: Buffer[], warmup, repeats }) -> Promise<{ timesMs, gpu }>
// Each argument is the raw bytes of one kernel parameter (8 for a pointer, 4 for an int, ...).
// Every timed launch is bracketed by events; the context is synchronised afterwards so that a fault
// is reported by this call (what CUDA_LAUNCH_BLOCKING=1 does), with api "cuCtxSynchronize".
// `gpu` gives each timed launch's start and end as ms after the session's time origin (markTimeOrigin);
// it is empty when no origin was recorded this run or an elapsed time could not be read — never an error.
#include <napi.h>

#include <array>

#include "args.h"
#include "async.h"
#include "loader.h"
#include "session.h"

namespace {

std::array<unsigned, 3> dims(Napi::Env env, Napi::Value value, const char* what) {
  if (!value.IsArray() || value.As<Napi::Array>().Length() != 3)
    throw Napi::TypeError::New(env, std::string(what) + " must be [x, y, z]");
  Napi::Array a = value.As<Napi::Array>();
  std::array<unsigned, 3> out{};
  // The driver rejects out-of-range dims itself; we only guard the C type here.
  for (uint32_t i = 0; i < 3; i++) out[i] = static_cast<unsigned>(args::number(env, a.Get(i), what, 0, 4294967295.0));
  return out;
}

struct EventPair {
  CUevent start = nullptr, stop = nullptr;
  ~EventPair() {
    if (start) cu.cuEventDestroy(start);
    if (stop) cu.cuEventDestroy(stop);
  }
};

}  // namespace

Napi::Value Launch(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object spec = args::object(info, 0, "launch");
  int functionId = static_cast<int>(args::number(env, spec.Get("functionId"), "functionId", 1, 2147483647));
  auto grid = dims(env, spec.Get("grid"), "grid");
  auto block = dims(env, spec.Get("block"), "block");
  unsigned sharedBytes = static_cast<unsigned>(args::number(env, spec.Get("sharedBytes"), "sharedBytes", 0, 4294967295.0));
  int warmup = static_cast<int>(args::number(env, spec.Get("warmup"), "warmup", 0, 10000));
  int repeats = static_cast<int>(args::number(env, spec.Get("repeats"), "repeats", 1, 10000));
  Napi::Value argsValue = spec.Get("args");
  if (!argsValue.IsArray()) throw Napi::TypeError::New(env, "args must be an array of Buffers");
  Napi::Array argArray = argsValue.As<Napi::Array>();
  auto params = std::make_shared<std::vector<std::vector<uint8_t>>>();
  for (uint32_t i = 0; i < argArray.Length(); i++) {
    Napi::Buffer<uint8_t> b = args::buffer(env, argArray.Get(i), "args[]");
    if (b.Length() == 0 || b.Length() > 4096) throw Napi::RangeError::New(env, "each argument must be 1..4096 bytes");
    params->emplace_back(b.Data(), b.Data() + b.Length());
  }
  auto times = std::make_shared<std::vector<double>>();
  // (start, end) after the origin, per timed launch.
  auto gpu = std::make_shared<std::vector<std::pair<double, double>>>();

  auto execute = [=](Failure& failure) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!enterContext(failure, "cuLaunchKernel")) return;
    auto it = s.functions.find(functionId);
    if (it == s.functions.end())
      return failWorkbench(failure, "cuLaunchKernel", "No function with id " + std::to_string(functionId));
    CUfunction function = it->second.second;
    std::vector<void*> pointers;
    for (auto& p : *params) pointers.push_back(p.data());
    void** kernelParams = pointers.empty() ? nullptr : pointers.data();
    auto launchOnce = [&]() {
      return checkDriver(failure, "cuLaunchKernel",
                         cu.cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                           sharedBytes, nullptr, kernelParams, nullptr));
    };
    for (int i = 0; i < warmup; i++)
      if (!launchOnce()) return;
    auto elapsedFn = cu.cuEventElapsedTime_v2 ? cu.cuEventElapsedTime_v2 : cu.cuEventElapsedTime_v1;
    CUevent origin = s.timeOriginValid ? s.timeOrigin : nullptr;
    bool placed = origin != nullptr && elapsedFn != nullptr;
    if (placed) gpu->reserve(static_cast<size_t>(repeats));
    for (int i = 0; i < repeats; i++) {
      EventPair events;
      if (!checkDriver(failure, "cuEventCreate", cu.cuEventCreate(&events.start, CU_EVENT_DEFAULT))) return;
      if (!checkDriver(failure, "cuEventCreate", cu.cuEventCreate(&events.stop, CU_EVENT_DEFAULT))) return;
      if (!checkDriver(failure, "cuEventRecord", cu.cuEventRecord(events.start, nullptr))) return;
      if (!launchOnce()) return;
      if (!checkDriver(failure, "cuEventRecord", cu.cuEventRecord(events.stop, nullptr))) return;
      // A fault inside the kernel surfaces here first; report it as the synchronisation that found it.
      if (!checkDriver(failure, "cuCtxSynchronize", cu.cuEventSynchronize(events.stop))) return;
      float ms = 0;
      if (elapsedFn != nullptr && !checkDriver(failure, "cuEventElapsedTime", elapsedFn(&ms, events.start, events.stop)))
        return;
      times->push_back(ms);
      if (placed) {
        // Placing the launch on the run's axis is a nicety: a failure here drops every placement, not the launch.
        // The end is the start plus the launch's own elapsed time: a float of ms after the origin has a ulp
        // of ~4 µs a minute into a run, and (origin, stop) would lose a short kernel's duration in it.
        float startMs = 0;
        placed = elapsedFn(&startMs, origin, events.start) == CUDA_SUCCESS;
        if (placed) gpu->emplace_back(startMs, static_cast<double>(startMs) + ms);
        else gpu->clear();
      }
    }
    checkDriver(failure, "cuCtxSynchronize", cu.cuCtxSynchronize());
  };
  auto resolve = [times, gpu](Napi::Env env) -> Napi::Value {
    Napi::Object o = Napi::Object::New(env);
    Napi::Array t = Napi::Array::New(env, times->size());
    for (size_t i = 0; i < times->size(); i++) t.Set(i, (*times)[i]);
    o.Set("timesMs", t);
    Napi::Array g = Napi::Array::New(env, gpu->size());
    for (size_t i = 0; i < gpu->size(); i++) {
      Napi::Object span = Napi::Object::New(env);
      span.Set("startMs", (*gpu)[i].first);
      span.Set("endMs", (*gpu)[i].second);
      g.Set(i, span);
    }
    o.Set("gpu", g);
    return o;
  };
  return PromiseWorker::Start(env, execute, resolve);
}
