// Module registration only; each concern lives in its own file.
#include <napi.h>

#include "async.h"

Napi::Value LoadLibraries(const Napi::CallbackInfo&);
Napi::Value ListDevices(const Napi::CallbackInfo&);
Napi::Value NvmlSnapshot(const Napi::CallbackInfo&);
Napi::Value NvmlSample(const Napi::CallbackInfo&);
Napi::Value NvmlSampleSync(const Napi::CallbackInfo&);
Napi::Value NvmlProcessName(const Napi::CallbackInfo&);
Napi::Value NvmlSamplerStart(const Napi::CallbackInfo&);
Napi::Value NvmlSamplerTake(const Napi::CallbackInfo&);
Napi::Value NvmlSamplerStop(const Napi::CallbackInfo&);
Napi::Value NvmlHealth(const Napi::CallbackInfo&);
Napi::Value OpenContext(const Napi::CallbackInfo&);
Napi::Value CloseContext(const Napi::CallbackInfo&);
Napi::Value Synchronize(const Napi::CallbackInfo&);
Napi::Value MarkTimeOrigin(const Napi::CallbackInfo&);
Napi::Value LoadModule(const Napi::CallbackInfo&);
Napi::Value UnloadModule(const Napi::CallbackInfo&);
Napi::Value GetFunction(const Napi::CallbackInfo&);
Napi::Value SetFunctionAttribute(const Napi::CallbackInfo&);
Napi::Value MemGetInfo(const Napi::CallbackInfo&);
Napi::Value MemAlloc(const Napi::CallbackInfo&);
Napi::Value MemFree(const Napi::CallbackInfo&);
Napi::Value MemcpyHtoD(const Napi::CallbackInfo&);
Napi::Value MemcpyDtoH(const Napi::CallbackInfo&);
Napi::Value MemsetD8(const Napi::CallbackInfo&);
Napi::Value MemcpyDtoHRegions(const Napi::CallbackInfo&);
Napi::Value MemAllocGuarded(const Napi::CallbackInfo&);
Napi::Value Launch(const Napi::CallbackInfo&);
Napi::Value NvrtcCompile(const Napi::CallbackInfo&);
Napi::Value ProbeLaunches(const Napi::CallbackInfo&);

Napi::Value LeadProcessGroup(const Napi::CallbackInfo&);
Napi::Value DieWithParent(const Napi::CallbackInfo&);
Napi::Value LimitWritableMemory(const Napi::CallbackInfo&);
Napi::Value CaptureOutputStart(const Napi::CallbackInfo&);
Napi::Value CaptureOutputTake(const Napi::CallbackInfo&);
Napi::Value CaptureOutputStop(const Napi::CallbackInfo&);
Napi::Value FloatSums(const Napi::CallbackInfo&);

Napi::Value SetInline(const Napi::CallbackInfo& info) {
  PromiseWorker::inlineMode() = info.Length() > 0 && info[0].ToBoolean().Value();
  return info.Env().Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("abiVersion", Napi::Number::New(env, 1));
  exports.Set("setInline", Napi::Function::New(env, SetInline, "setInline"));
  exports.Set("loadLibraries", Napi::Function::New(env, LoadLibraries, "loadLibraries"));
  exports.Set("listDevices", Napi::Function::New(env, ListDevices, "listDevices"));
  exports.Set("nvmlSnapshot", Napi::Function::New(env, NvmlSnapshot, "nvmlSnapshot"));
  exports.Set("nvmlSample", Napi::Function::New(env, NvmlSample, "nvmlSample"));
  exports.Set("nvmlSampleSync", Napi::Function::New(env, NvmlSampleSync, "nvmlSampleSync"));
  exports.Set("nvmlProcessName", Napi::Function::New(env, NvmlProcessName, "nvmlProcessName"));
  exports.Set("nvmlSamplerStart", Napi::Function::New(env, NvmlSamplerStart, "nvmlSamplerStart"));
  exports.Set("nvmlSamplerTake", Napi::Function::New(env, NvmlSamplerTake, "nvmlSamplerTake"));
  exports.Set("nvmlSamplerStop", Napi::Function::New(env, NvmlSamplerStop, "nvmlSamplerStop"));
  exports.Set("nvmlHealth", Napi::Function::New(env, NvmlHealth, "nvmlHealth"));
  exports.Set("openContext", Napi::Function::New(env, OpenContext, "openContext"));
  exports.Set("closeContext", Napi::Function::New(env, CloseContext, "closeContext"));
  exports.Set("synchronize", Napi::Function::New(env, Synchronize, "synchronize"));
  exports.Set("markTimeOrigin", Napi::Function::New(env, MarkTimeOrigin, "markTimeOrigin"));
  exports.Set("loadModule", Napi::Function::New(env, LoadModule, "loadModule"));
  exports.Set("unloadModule", Napi::Function::New(env, UnloadModule, "unloadModule"));
  exports.Set("getFunction", Napi::Function::New(env, GetFunction, "getFunction"));
  exports.Set("setFunctionAttribute", Napi::Function::New(env, SetFunctionAttribute, "setFunctionAttribute"));
  exports.Set("memGetInfo", Napi::Function::New(env, MemGetInfo, "memGetInfo"));
  exports.Set("memAlloc", Napi::Function::New(env, MemAlloc, "memAlloc"));
  exports.Set("memFree", Napi::Function::New(env, MemFree, "memFree"));
  exports.Set("memcpyHtoD", Napi::Function::New(env, MemcpyHtoD, "memcpyHtoD"));
  exports.Set("memcpyDtoH", Napi::Function::New(env, MemcpyDtoH, "memcpyDtoH"));
  exports.Set("memsetD8", Napi::Function::New(env, MemsetD8, "memsetD8"));
  exports.Set("memAllocGuarded", Napi::Function::New(env, MemAllocGuarded, "memAllocGuarded"));
  exports.Set("memcpyDtoHRegions", Napi::Function::New(env, MemcpyDtoHRegions, "memcpyDtoHRegions"));
  exports.Set("captureOutputStart", Napi::Function::New(env, CaptureOutputStart, "captureOutputStart"));
  exports.Set("captureOutputTake", Napi::Function::New(env, CaptureOutputTake, "captureOutputTake"));
  exports.Set("captureOutputStop", Napi::Function::New(env, CaptureOutputStop, "captureOutputStop"));
  exports.Set("floatSums", Napi::Function::New(env, FloatSums, "floatSums"));
  exports.Set("launch", Napi::Function::New(env, Launch, "launch"));
  exports.Set("nvrtcCompile", Napi::Function::New(env, NvrtcCompile, "nvrtcCompile"));
  exports.Set("probeLaunches", Napi::Function::New(env, ProbeLaunches, "probeLaunches"));
  exports.Set("leadProcessGroup", Napi::Function::New(env, LeadProcessGroup, "leadProcessGroup"));
  exports.Set("dieWithParent", Napi::Function::New(env, DieWithParent, "dieWithParent"));
  exports.Set("limitWritableMemory", Napi::Function::New(env, LimitWritableMemory, "limitWritableMemory"));
  return exports;
}

NODE_API_MODULE(gpu_workbench_native, Init)
