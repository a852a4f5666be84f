#include "nvml_init.h"

#include <mutex>

#include "loader.h"

namespace {
std::once_flag initOnce;
nvmlReturn_t initResult = -1;
}  // namespace

bool ensureNvml(Failure& failure) {
  if (!libraryState(Library::Nvml).loaded) {
    failure.failed = true;
    failure.library = "nvml";
    failure.api = "nvmlInit_v2";
    failure.code = -1;
    failure.name = "WORKBENCH_NVML_NOT_LOADED";
    failure.message = "NVML (libnvidia-ml.so.1) is not loaded: it ships with the NVIDIA driver";
    return false;
  }
  std::call_once(initOnce, [] { initResult = nvml.nvmlInit(); });
  return checkNvml(failure, "nvmlInit_v2", initResult);
}
