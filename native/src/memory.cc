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

// memcpyDtoH(pointer, buffer) -> Promise<milliseconds>: the driver copies buffer.length bytes into the caller's
// Buffer. The caller allocates it (in JavaScript, where a failed allocation is a RangeError rather than V8's fatal
// out-of-memory); no memory of ours is handed to JavaScript, which Electron's V8 memory cage would refuse (the
// build hides the external-buffer API: CMakeLists.txt).
Napi::Value MemcpyDtoH(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  CUdeviceptr pointer = args::bigint(env, info[0], "pointer");
  Napi::Buffer<uint8_t> buffer = args::buffer(env, info[1], "buffer");
  uint8_t* data = buffer.Data();
  size_t length = buffer.Length();
  auto elapsed = std::make_shared<double>(0);
  auto execute = [pointer, data, length, elapsed](Failure& failure) {
    std::lock_guard<std::mutex> lock(session().mutex);
    if (!enterContext(failure, "cuMemcpyDtoH_v2")) return;
    auto start = std::chrono::steady_clock::now();
    if (!checkDriver(failure, "cuMemcpyDtoH_v2", cu.cuMemcpyDtoH(data, pointer, length))) return;
    *elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  return PromiseWorker::StartKeeping(env, buffer, execute, [elapsed](Napi::Env env) { return Napi::Number::New(env, *elapsed); });
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

// memcpyDtoHRegions([pointer...], bytes) -> Promise<Buffer>: `bytes` from each pointer, concatenated, in one
// call — the runner reads every guard region after a launch without a thread-pool round trip per region.
Napi::Value MemcpyDtoHRegions(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsArray()) throw Napi::TypeError::New(env, "pointers must be an array of bigints");
  Napi::Array list = info[0].As<Napi::Array>();
  if (list.Length() > 4096) throw Napi::RangeError::New(env, "pointers must have at most 4096 entries");
  std::vector<CUdeviceptr> pointers;
  for (uint32_t i = 0; i < list.Length(); i++) pointers.push_back(args::bigint(env, list.Get(i), "pointers[i]"));
  size_t bytes = static_cast<size_t>(args::number(env, info[1], "bytes", 1, 1 << 20));
  auto host = std::make_shared<std::vector<uint8_t>>(pointers.size() * bytes);
  auto execute = [pointers, bytes, host](Failure& failure) {
    std::lock_guard<std::mutex> lock(session().mutex);
    if (!enterContext(failure, "cuMemcpyDtoH_v2")) return;
    for (size_t i = 0; i < pointers.size(); i++) {
      if (!checkDriver(failure, "cuMemcpyDtoH_v2", cu.cuMemcpyDtoH(host->data() + i * bytes, pointers[i], bytes))) return;
    }
  };
  return PromiseWorker::Start(env, execute, [host](Napi::Env env) -> Napi::Value {
    return Napi::Buffer<uint8_t>::Copy(env, host->data(), host->size());
  });
}

// memAllocGuarded(bytes, guardBytes, guardByte, poisonByte) -> Promise<bigint base>: allocates
// bytes + 2 * guardBytes, fills it all with guardByte and the inside with poisonByte (-1: leave it), in
// one call. The runner hands kernels base + guardBytes (see core/plan/guards.ts).
Napi::Value MemAllocGuarded(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  size_t bytes = static_cast<size_t>(args::number(env, info[0], "bytes", 1, kMaxBytes));
  size_t guard = static_cast<size_t>(args::number(env, info[1], "guardBytes", 0, 1 << 20));
  unsigned char guardByte = static_cast<unsigned char>(args::number(env, info[2], "guardByte", 0, 255));
  int poison = static_cast<int>(args::number(env, info[3], "poisonByte", -1, 255));
  auto pointer = std::make_shared<CUdeviceptr>(0);
  auto execute = [bytes, guard, guardByte, poison, pointer](Failure& failure) {
    std::lock_guard<std::mutex> lock(session().mutex);
    if (!enterContext(failure, "cuMemAlloc_v2")) return;
    if (!checkDriver(failure, "cuMemAlloc_v2", cu.cuMemAlloc(pointer.get(), bytes + 2 * guard))) return;
    if (guard > 0) {
      if (!checkDriver(failure, "cuMemsetD8_v2", cu.cuMemsetD8(*pointer, guardByte, guard)) ||
          !checkDriver(failure, "cuMemsetD8_v2", cu.cuMemsetD8(*pointer + guard + bytes, guardByte, guard))) {
        cu.cuMemFree(*pointer);
        return;
      }
    }
    if (poison >= 0 && !checkDriver(failure, "cuMemsetD8_v2", cu.cuMemsetD8(*pointer + guard, static_cast<unsigned char>(poison), bytes))) {
      cu.cuMemFree(*pointer);
    }
  };
  return PromiseWorker::Start(env, execute,
                              [pointer](Napi::Env env) { return Napi::BigInt::New(env, static_cast<uint64_t>(*pointer)); });
}
