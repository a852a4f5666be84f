// Turns CUDA, NVRTC and NVML failures into structured JS errors: { api, code, name, message, library }.
#pragma once
#include <napi.h>

#include <string>

#include "cuda_types.h"

struct Failure {
  bool failed = false;
  std::string library;  // "cuda" | "nvrtc" | "nvml" | "workbench"
  std::string api;
  int code = 0;
  std::string name;
  std::string message;
};

// Fills `failure` from a CUresult; returns true when `result` is success. Safe off the JS thread.
bool checkDriver(Failure& failure, const char* api, CUresult result);
bool checkNvrtc(Failure& failure, const char* api, nvrtcResult result);
bool checkNvml(Failure& failure, const char* api, nvmlReturn_t result);
void failWorkbench(Failure& failure, const char* api, const std::string& message);

Napi::Error toJsError(Napi::Env env, const Failure& failure);
[[noreturn]] void throwFailure(Napi::Env env, const Failure& failure);
