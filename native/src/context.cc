// openContext(ordinal), closeContext(), synchronize(): the runner's primary-context lifecycle.
#include <napi.h>

#include "args.h"
#include "async.h"
#include "loader.h"
#include "session.h"

Session& session() {
  static Session instance;
  return instance;
}

bool enterContext(Failure& failure, const char* api) {
  Session& s = session();
  if (!s.open) {
    failWorkbench(failure, api, "No CUDA context is open in this process: call openContext(ordinal) first");
    return false;
  }
  return checkDriver(failure, "cuCtxSetCurrent", cu.cuCtxSetCurrent(s.context));
}

Napi::Value OpenContext(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int ordinal = static_cast<int>(args::number(env, info[0], "ordinal", 0, 1023));
  auto execute = [ordinal](Failure& failure) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!requireDriver(failure, "cuInit")) return;
    if (s.open) {
      failWorkbench(failure, "openContext", "A CUDA context is already open in this process");
      return;
    }
    if (!checkDriver(failure, "cuInit", cu.cuInit(0))) return;
    int count = 0;
    if (!checkDriver(failure, "cuDeviceGetCount", cu.cuDeviceGetCount(&count))) return;
    if (ordinal >= count) {
      failWorkbench(failure, "cuDeviceGet",
                    "Device " + std::to_string(ordinal) + " does not exist: this machine has " + std::to_string(count) +
                        " CUDA device(s)");
      return;
    }
    CUdevice device = 0;
    if (!checkDriver(failure, "cuDeviceGet", cu.cuDeviceGet(&device, ordinal))) return;
    CUcontext context = nullptr;
    if (!checkDriver(failure, "cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(&context, device))) return;
    if (!checkDriver(failure, "cuCtxSetCurrent", cu.cuCtxSetCurrent(context))) {
      cu.cuDevicePrimaryCtxRelease(device);
      return;
    }
    s.device = device;
    s.context = context;
    s.open = true;
  };
  return PromiseWorker::Start(env, execute, [](Napi::Env env) { return env.Undefined(); });
}

Napi::Value CloseContext(const Napi::CallbackInfo& info) {
  auto execute = [](Failure& failure) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.open) return;
    cu.cuCtxSetCurrent(s.context);
    if (s.timeOrigin) cu.cuEventDestroy(s.timeOrigin);
    s.timeOrigin = nullptr;
    s.timeOriginValid = false;
    for (auto& [id, module] : s.modules) cu.cuModuleUnload(module);
    s.modules.clear();
    s.functions.clear();
    CUresult result = cu.cuDevicePrimaryCtxRelease(s.device);
    s.open = false;
    s.context = nullptr;
    checkDriver(failure, "cuDevicePrimaryCtxRelease_v2", result);
  };
  return PromiseWorker::Start(info.Env(), execute, [](Napi::Env env) { return env.Undefined(); });
}

// markTimeOrigin(): records the session's origin event on the default stream (created on first use).
// The runner calls it as a run begins; launch() then gives each timed launch's GPU start and end as ms
// after it, so the GPU's times share the run's time axis.
Napi::Value MarkTimeOrigin(const Napi::CallbackInfo& info) {
  auto execute = [](Failure& failure) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.timeOriginValid = false;
    if (!enterContext(failure, "cuEventRecord")) return;
    if (!s.timeOrigin && !checkDriver(failure, "cuEventCreate", cu.cuEventCreate(&s.timeOrigin, CU_EVENT_DEFAULT))) {
      s.timeOrigin = nullptr;
      return;
    }
    s.timeOriginValid = checkDriver(failure, "cuEventRecord", cu.cuEventRecord(s.timeOrigin, nullptr));
  };
  return PromiseWorker::Start(info.Env(), execute, [](Napi::Env env) { return env.Undefined(); });
}

Napi::Value Synchronize(const Napi::CallbackInfo& info) {
  auto execute = [](Failure& failure) {
    std::lock_guard<std::mutex> lock(session().mutex);
    if (!enterContext(failure, "cuCtxSynchronize")) return;
    checkDriver(failure, "cuCtxSynchronize", cu.cuCtxSynchronize());
  };
  return PromiseWorker::Start(info.Env(), execute, [](Napi::Env env) { return env.Undefined(); });
}
