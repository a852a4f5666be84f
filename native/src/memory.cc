// memGetInfo, memAlloc, memFree, memcpyHtoD, memcpyDtoH, memsetD8. Device pointers cross to JS as
// bigint; sizes as safe integers.
#include <napi.h>

#include <chrono>

#include "args.h"
#include "async.h"
#include "loader.h"
#include "session.h"

namespace {
constexpr double kMaxBytes = 9007199254740991.0;  // Number.MAX_SAFE_INTEGER
Napi::Value undefinedResult(Napi::Env env) { return env.Undefined(); }
}  // namespace

Napi::Value MemGetInfo(const Napi::CallbackInfo& info) {
  auto sizes = std::make_shared<std::pair<size_t, size_t>>(0, 0);
  auto execute = [sizes](Failure& failure) {
    std::lock_guard<std::mutex> lock(session().mutex);
    if (!enterContext(failure, "cuMemGetInfo_v2")) return;
    checkDriver(failure, "cuMemGetInfo_v2", cu.cuMemGetInfo(&sizes->first, &sizes->second));
  };
  return PromiseWorker::Start(info.Env(), execute, [sizes](Napi::Env env) -> Napi::Value {
    Napi::Object o = Napi::Object::New(env);
    o.Set("freeBytes", static_cast<double>(sizes->first));
    o.Set("totalBytes", static_cast<double>(sizes->second));
    return o;
  });
}

Napi::Value MemAlloc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  size_t bytes = static_cast<size_t>(args::number(env, info[0], "bytes", 1, kMaxBytes));
  auto pointer = std::make_shared<CUdeviceptr>(0);
  auto execute = [bytes, pointer](Failure& failure) {
    std::lock_guard<std::mutex> lock(session().mutex);
    if (!enterContext(failure, "cuMemAlloc_v2")) return;
    checkDriver(failure, "cuMemAlloc_v2", cu.cuMemAlloc(pointer.get(), bytes));
  };
  return PromiseWorker::Start(env, execute,
                              [pointer](Napi::Env env) { return Napi::BigInt::New(env, static_cast<uint64_t>(*pointer)); });
}

Napi::Value MemFree(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CUdeviceptr pointer = args::bigint(env, info[0], "pointer");
  auto execute = [pointer](Failure& failure) {
    std::lock_guard<std::mutex> lock(session().mutex);
    if (!enterContext(failure, "cuMemFree_v2")) return;
    checkDriver(failure, "cuMemFree_v2", cu.cuMemFree(pointer));
  };
  return PromiseWorker::Start(env, execute, undefinedResult);
}

// memcpyHtoD(pointer, buffer) -> Promise<milliseconds>. The copy is synchronous, so host time is its time.
Napi::Value MemcpyHtoD(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CUdeviceptr pointer = args::bigint(env, info[0], "pointer");
  Napi::Buffer<uint8_t> buffer = args::buffer(env, info[1], "buffer");
  const uint8_t* data = buffer.Data();
  size_t length = buffer.Length();
  auto elapsed = std::make_shared<double>(0);
  auto execute = [pointer, data, length, elapsed](Failure& failure) {
    std::lock_guard<std::mutex> lock(session().mutex);
    if (!enterContext(failure, "cuMemcpyHtoD_v2")) return;
    auto start = std::chrono::steady_clock::now();
    if (!checkDriver(failure, "cuMemcpyHtoD_v2", cu.cuMemcpyHtoD(pointer, data, length))) return;
    *elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  return PromiseWorker::StartKeeping(env, buffer, execute, [elapsed](Napi::Env env) { return Napi::Number::New(env, *elapsed); });
}

// memcpyDtoH(pointer, bytes) -> Promise<{ data: Buffer, ms }>
Napi::Value MemcpyDtoH(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CUdeviceptr pointer = args::bigint(env, info[0], "pointer");
  size_t bytes = static_cast<size_t>(args::number(env, info[1], "bytes", 1, kMaxBytes));
  auto host = std::make_shared<std::vector<uint8_t>>();
  auto elapsed = std::make_shared<double>(0);
  auto execute = [pointer, bytes, host, elapsed](Failure& failure) {
    try {
      host->resize(bytes);
    } catch (const std::bad_alloc&) {
      return failWorkbench(failure, "cuMemcpyDtoH_v2",
                           "Cannot allocate " + std::to_string(bytes) + " bytes of host memory for the read-back");
    }
    std::lock_guard<std::mutex> lock(session().mutex);
    if (!enterContext(failure, "cuMemcpyDtoH_v2")) return;
    auto start = std::chrono::steady_clock::now();
    if (!checkDriver(failure, "cuMemcpyDtoH_v2", cu.cuMemcpyDtoH(host->data(), pointer, bytes))) return;
    *elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  return PromiseWorker::Start(env, execute, [host, elapsed](Napi::Env env) -> Napi::Value {
    auto* owned = new std::vector<uint8_t>(std::move(*host));
    Napi::Object o = Napi::Object::New(env);
    o.Set("data", Napi::Buffer<uint8_t>::New(env, owned->data(), owned->size(),
                                             [](Napi::Env, uint8_t*, std::vector<uint8_t>* v) { delete v; }, owned));
    o.Set("ms", *elapsed);
    return o;
  });
}

Napi::Value MemsetD8(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CUdeviceptr pointer = args::bigint(env, info[0], "pointer");
  unsigned char value = static_cast<unsigned char>(args::number(env, info[1], "value", 0, 255));
  size_t bytes = static_cast<size_t>(args::number(env, info[2], "bytes", 1, kMaxBytes));
  auto execute = [pointer, value, bytes](Failure& failure) {
    std::lock_guard<std::mutex> lock(session().mutex);
    if (!enterContext(failure, "cuMemsetD8_v2")) return;
    checkDriver(failure, "cuMemsetD8_v2", cu.cuMemsetD8(pointer, value, bytes));
  };
  return PromiseWorker::Start(env, execute, undefinedResult);
}
