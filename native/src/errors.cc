#include "errors.h"

#include "loader.h"

namespace {
const char* nvrtcNames[] = {
    "NVRTC_SUCCESS",
    "NVRTC_ERROR_OUT_OF_MEMORY",
    "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
    "NVRTC_ERROR_INVALID_INPUT",
    "NVRTC_ERROR_INVALID_PROGRAM",
    "NVRTC_ERROR_INVALID_OPTION",
    "NVRTC_ERROR_COMPILATION",
    "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
    "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
    "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
    "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
    "NVRTC_ERROR_INTERNAL_ERROR",
    "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
};
}  // namespace

bool checkDriver(Failure& failure, const char* api, CUresult result) {
  if (result == CUDA_SUCCESS) return true;
  const char* name = nullptr;
  const char* text = nullptr;
  if (cu.cuGetErrorName == nullptr || cu.cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (cu.cuGetErrorString == nullptr || cu.cuGetErrorString(result, &text) != CUDA_SUCCESS) text = nullptr;
  failure.failed = true;
  failure.library = "cuda";
  failure.api = api;
  failure.code = result;
  failure.name = name ? name : "CUDA_ERROR_UNKNOWN_CODE_" + std::to_string(result);
  failure.message = std::string(api) + " failed: " + failure.name + (text ? std::string(" (") + text + ")" : "");
  return false;
}

bool checkNvrtc(Failure& failure, const char* api, nvrtcResult result) {
  if (result == 0) return true;
  failure.failed = true;
  failure.library = "nvrtc";
  failure.api = api;
  failure.code = result;
  int count = sizeof(nvrtcNames) / sizeof(nvrtcNames[0]);
  failure.name = result >= 0 && result < count ? nvrtcNames[result] : "NVRTC_ERROR_" + std::to_string(result);
  const char* text = nvrtc.nvrtcGetErrorString ? nvrtc.nvrtcGetErrorString(result) : nullptr;
  failure.message = std::string(api) + " failed: " + failure.name + (text ? std::string(" (") + text + ")" : "");
  return false;
}

bool checkNvml(Failure& failure, const char* api, nvmlReturn_t result) {
  if (result == NVML_SUCCESS) return true;
  failure.failed = true;
  failure.library = "nvml";
  failure.api = api;
  failure.code = result;
  const char* text = nvml.nvmlErrorString ? nvml.nvmlErrorString(result) : nullptr;
  failure.name = "NVML_ERROR_" + std::to_string(result);
  failure.message = std::string(api) + " failed: " + (text ? text : failure.name);
  return false;
}

void failWorkbench(Failure& failure, const char* api, const std::string& message) {
  failure.failed = true;
  failure.library = "workbench";
  failure.api = api;
  failure.code = -1;
  failure.name = "WORKBENCH_INVALID_ARGUMENT";
  failure.message = message;
}

Napi::Error toJsError(Napi::Env env, const Failure& failure) {
  Napi::Error error = Napi::Error::New(env, failure.message);
  error.Set("library", failure.library);
  error.Set("api", failure.api);
  error.Set("code", Napi::Number::New(env, failure.code));
  error.Set("name", failure.name);
  return error;
}

void throwFailure(Napi::Env env, const Failure& failure) { throw toJsError(env, failure); }
