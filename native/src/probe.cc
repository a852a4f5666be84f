// probeLaunches({ functionId, configs: Float64Array [gx,gy,gz,bx,by,bz,smem]*, args: Buffer[], raiseDynamicShared? })
//   -> Promise<{ launch: Int32Array, sync: Int32Array, occupancy: Int32Array }>
// Launches one kernel with many configurations and records what the driver says to each, with
// cuOccupancyMaxActiveBlocksPerMultiprocessor for the same block size and shared memory. With
// raiseDynamicShared, each row first sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as the
// workbench's runner does (the row's bytes when above the default, the default otherwise); a refused
// set is that row's verdict. This is how the GPU suite holds the launch validator to the driver.
#include <napi.h>

#include "args.h"
#include "async.h"
#include "loader.h"
#include "session.h"

Napi::Value ProbeLaunches(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object spec = args::object(info, 0, "probe");
  int functionId = static_cast<int>(args::number(env, spec.Get("functionId"), "functionId", 1, 2147483647));
  if (!spec.Get("configs").IsTypedArray() || spec.Get("configs").As<Napi::TypedArray>().TypedArrayType() != napi_float64_array)
    throw Napi::TypeError::New(env, "configs must be a Float64Array of [gx, gy, gz, bx, by, bz, sharedBytes] rows");
  Napi::Float64Array flat = spec.Get("configs").As<Napi::Float64Array>();
  if (flat.ElementLength() % 7 != 0 || flat.ElementLength() / 7 > 1000000)
    throw Napi::RangeError::New(env, "configs must hold whole rows of 7 numbers, at most 1,000,000 rows");
  auto configs = std::make_shared<std::vector<double>>(flat.Data(), flat.Data() + flat.ElementLength());
  for (double v : *configs)
    if (!(v >= 0 && v <= 4294967295.0)) throw Napi::RangeError::New(env, "every config value must be in [0, 2^32)");
  bool raiseDynamicShared = spec.Get("raiseDynamicShared").ToBoolean().Value();
  Napi::Array argArray = spec.Get("args").As<Napi::Array>();
  auto params = std::make_shared<std::vector<std::vector<uint8_t>>>();
  for (uint32_t i = 0; i < argArray.Length(); i++) {
    Napi::Buffer<uint8_t> b = args::buffer(env, argArray.Get(i), "args[]");
    params->emplace_back(b.Data(), b.Data() + b.Length());
  }
  size_t rows = configs->size() / 7;
  auto launch = std::make_shared<std::vector<int32_t>>(rows, 0);
  auto sync = std::make_shared<std::vector<int32_t>>(rows, 0);
  auto occupancy = std::make_shared<std::vector<int32_t>>(rows, -1);

  auto execute = [=](Failure& failure) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!enterContext(failure, "cuLaunchKernel")) return;
    auto it = s.functions.find(functionId);
    if (it == s.functions.end()) return failWorkbench(failure, "cuLaunchKernel", "No function with id " + std::to_string(functionId));
    CUfunction function = it->second.second;
    std::vector<void*> pointers;
    for (auto& p : *params) pointers.push_back(p.data());
    int defaultLimit = 0;
    if (raiseDynamicShared && !checkDriver(failure, "cuFuncGetAttribute", cu.cuFuncGetAttribute(&defaultLimit, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, function))) return;
    int currentLimit = defaultLimit;
    for (size_t r = 0; r < rows; r++) {
      const double* c = configs->data() + r * 7;
      unsigned g[3] = {unsigned(c[0]), unsigned(c[1]), unsigned(c[2])};
      unsigned b[3] = {unsigned(c[3]), unsigned(c[4]), unsigned(c[5])};
      unsigned smem = unsigned(c[6]);
      if (raiseDynamicShared) {
        int wanted = double(smem) > double(defaultLimit) ? int(smem > 2147483647u ? 2147483647u : smem) : defaultLimit;
        if (wanted != currentLimit) {
          CUresult set = cu.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, wanted);
          if (set != CUDA_SUCCESS) {
            (*launch)[r] = set;
            (*occupancy)[r] = -set;
            continue;
          }
          currentLimit = wanted;
        }
      }
      if (cu.cuOccupancyMaxActiveBlocksPerMultiprocessor) {
        int blocks = 0;
        CUresult o = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function, int(double(b[0]) * b[1] * b[2] > 2147483647.0 ? 2147483647 : b[0] * b[1] * b[2]), smem);
        (*occupancy)[r] = o == CUDA_SUCCESS ? blocks : -o;
      }
      CUresult l = cu.cuLaunchKernel(function, g[0], g[1], g[2], b[0], b[1], b[2], smem, nullptr, pointers.empty() ? nullptr : pointers.data(), nullptr);
      (*launch)[r] = l;
      if (l == CUDA_SUCCESS) (*sync)[r] = cu.cuCtxSynchronize();
      // A sticky error ends the probe: nothing after it would mean anything.
      if ((*sync)[r] != CUDA_SUCCESS) {
        checkDriver(failure, "cuCtxSynchronize", (*sync)[r]);
        return;
      }
    }
  };
  auto resolve = [=](Napi::Env env) -> Napi::Value {
    auto toArray = [&](const std::vector<int32_t>& v) {
      Napi::Int32Array a = Napi::Int32Array::New(env, v.size());
      for (size_t i = 0; i < v.size(); i++) a[i] = v[i];
      return a;
    };
    Napi::Object o = Napi::Object::New(env);
    o.Set("launch", toArray(*launch));
    o.Set("sync", toArray(*sync));
    o.Set("occupancy", toArray(*occupancy));
    return o;
  };
  return PromiseWorker::Start(env, execute, resolve);
}
