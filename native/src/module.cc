// loadModule(image), unloadModule(id), getFunction(moduleId, name), setFunctionAttribute(id, attr, v).
#include <napi.h>

#include <cstring>

#include "args.h"
#include "async.h"
#include "loader.h"
#include "session.h"

namespace {
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

const std::pair<const char*, int> functionAttributes[] = {
    {"maxThreadsPerBlock", CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
    {"sharedSizeBytes", CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
    {"constSizeBytes", CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES},
    {"localSizeBytes", CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
    {"numRegs", CU_FUNC_ATTRIBUTE_NUM_REGS},
    {"ptxVersion", CU_FUNC_ATTRIBUTE_PTX_VERSION},
    {"binaryVersion", CU_FUNC_ATTRIBUTE_BINARY_VERSION},
    {"maxDynamicSharedSizeBytes", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES},
};
}  // namespace

Napi::Value LoadModule(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Buffer<uint8_t> image = args::buffer(env, info[0], "image");
  if (image.Length() == 0) throw Napi::RangeError::New(env, "image must not be empty");
  // cuModuleLoadData reads PTX as a NUL-terminated string, so the image is copied with a terminator.
  auto bytes = std::make_shared<std::vector<uint8_t>>(image.Data(), image.Data() + image.Length());
  bytes->push_back(0);
  auto id = std::make_shared<int>(0);
  auto execute = [bytes, id](Failure& failure) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!enterContext(failure, "cuModuleLoadDataEx")) return;
    std::vector<char> errorLog(16384, 0), infoLog(16384, 0);
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                              CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {errorLog.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(errorLog.size() - 1)),
                      infoLog.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(infoLog.size() - 1))};
    CUmodule module = nullptr;
    CUresult result = cu.cuModuleLoadDataEx(&module, bytes->data(), 4, options, values);
    if (!checkDriver(failure, "cuModuleLoadDataEx", result)) {
      if (errorLog[0] != '\0') failure.message += "\nJIT log: " + std::string(errorLog.data());
      return;
    }
    *id = s.nextId++;
    s.modules[*id] = module;
  };
  return PromiseWorker::Start(env, execute, [id](Napi::Env env) { return Napi::Number::New(env, *id); });
}

Napi::Value UnloadModule(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int id = static_cast<int>(args::number(env, info[0], "moduleId", 1, 2147483647));
  auto execute = [id](Failure& failure) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!enterContext(failure, "cuModuleUnload")) return;
    auto it = s.modules.find(id);
    if (it == s.modules.end()) return failWorkbench(failure, "cuModuleUnload", "No module with id " + std::to_string(id));
    CUresult result = cu.cuModuleUnload(it->second);
    s.modules.erase(it);
    for (auto f = s.functions.begin(); f != s.functions.end();)
      f = f->second.first == id ? s.functions.erase(f) : std::next(f);
    checkDriver(failure, "cuModuleUnload", result);
  };
  return PromiseWorker::Start(env, execute, [](Napi::Env env) { return env.Undefined(); });
}

Napi::Value GetFunction(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int moduleId = static_cast<int>(args::number(env, info[0], "moduleId", 1, 2147483647));
  std::string name = args::string(env, info[1], "name");
  if (name.empty() || name.size() > 4096) throw Napi::RangeError::New(env, "name must be 1..4096 characters");
  struct Out {
    int id = 0;
    std::vector<int> values;
  };
  auto out = std::make_shared<Out>();
  auto execute = [moduleId, name, out](Failure& failure) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!enterContext(failure, "cuModuleGetFunction")) return;
    auto it = s.modules.find(moduleId);
    if (it == s.modules.end())
      return failWorkbench(failure, "cuModuleGetFunction", "No module with id " + std::to_string(moduleId));
    CUfunction function = nullptr;
    if (!checkDriver(failure, "cuModuleGetFunction", cu.cuModuleGetFunction(&function, it->second, name.c_str())))
      return;
    for (const auto& [key, attribute] : functionAttributes) {
      int value = 0;
      if (!checkDriver(failure, "cuFuncGetAttribute", cu.cuFuncGetAttribute(&value, attribute, function))) return;
      out->values.push_back(value);
    }
    out->id = s.nextId++;
    s.functions[out->id] = {moduleId, function};
  };
  auto resolve = [out](Napi::Env env) -> Napi::Value {
    Napi::Object o = Napi::Object::New(env);
    o.Set("id", out->id);
    Napi::Object attributes = Napi::Object::New(env);
    for (size_t i = 0; i < out->values.size(); i++) attributes.Set(functionAttributes[i].first, out->values[i]);
    o.Set("attributes", attributes);
    return o;
  };
  return PromiseWorker::Start(env, execute, resolve);
}

Napi::Value SetFunctionAttribute(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int id = static_cast<int>(args::number(env, info[0], "functionId", 1, 2147483647));
  int attribute = static_cast<int>(args::number(env, info[1], "attribute", 0, 64));
  int value = static_cast<int>(args::number(env, info[2], "value", -2147483648.0, 2147483647));
  auto execute = [id, attribute, value](Failure& failure) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!enterContext(failure, "cuFuncSetAttribute")) return;
    auto it = s.functions.find(id);
    if (it == s.functions.end())
      return failWorkbench(failure, "cuFuncSetAttribute", "No function with id " + std::to_string(id));
    checkDriver(failure, "cuFuncSetAttribute", cu.cuFuncSetAttribute(it->second.second, attribute, value));
  };
  return PromiseWorker::Start(env, execute, [](Napi::Env env) { return env.Undefined(); });
}
