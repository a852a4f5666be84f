// nvmlSnapshot() -> Promise<{ driverVersion, devices: [{ index, uuid, memory, processes }] }> from
// libnvidia-ml.so.1. NVML needs no CUDA context, so the host samples it (ARCHITECTURE.md §1).
#include <napi.h>

#include <mutex>

#include "async.h"
#include "loader.h"

namespace {

struct ProcessRecord {
  unsigned pid;
  unsigned long long usedBytes;
  std::string name;
};
struct NvmlDeviceRecord {
  unsigned index;
  std::string uuid;
  nvmlMemory_t memory{};
  bool processesAvailable = false;
  std::vector<ProcessRecord> processes;
};
struct Snapshot {
  std::string driverVersion;
  std::vector<NvmlDeviceRecord> devices;
};

std::once_flag initOnce;
nvmlReturn_t initResult = -1;

}  // namespace

Napi::Value NvmlSnapshot(const Napi::CallbackInfo& info) {
  auto snapshot = std::make_shared<Snapshot>();
  auto execute = [snapshot](Failure& failure) {
    if (!libraryState(Library::Nvml).loaded) {
      failure.failed = true;
      failure.library = "nvml";
      failure.api = "nvmlInit_v2";
      failure.code = -1;
      failure.name = "WORKBENCH_NVML_NOT_LOADED";
      failure.message = "NVML (libnvidia-ml.so.1) is not loaded: it ships with the NVIDIA driver";
      return;
    }
    std::call_once(initOnce, [] { initResult = nvml.nvmlInit(); });
    if (!checkNvml(failure, "nvmlInit_v2", initResult)) return;
    char version[96] = {0};
    if (!checkNvml(failure, "nvmlSystemGetDriverVersion", nvml.nvmlSystemGetDriverVersion(version, sizeof version)))
      return;
    snapshot->driverVersion = version;
    unsigned count = 0;
    if (!checkNvml(failure, "nvmlDeviceGetCount_v2", nvml.nvmlDeviceGetCount(&count))) return;
    for (unsigned index = 0; index < count; index++) {
      NvmlDeviceRecord record;
      record.index = index;
      nvmlDevice_t device = nullptr;
      if (!checkNvml(failure, "nvmlDeviceGetHandleByIndex_v2", nvml.nvmlDeviceGetHandleByIndex(index, &device))) return;
      char uuid[96] = {0};
      if (!checkNvml(failure, "nvmlDeviceGetUUID", nvml.nvmlDeviceGetUUID(device, uuid, sizeof uuid))) return;
      record.uuid = uuid;
      if (!checkNvml(failure, "nvmlDeviceGetMemoryInfo", nvml.nvmlDeviceGetMemoryInfo(device, &record.memory))) return;
      if (nvml.nvmlDeviceGetComputeRunningProcesses != nullptr) {
        std::vector<nvmlProcessInfo_t> infos(64);
        unsigned n = static_cast<unsigned>(infos.size());
        nvmlReturn_t r = nvml.nvmlDeviceGetComputeRunningProcesses(device, &n, infos.data());
        if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
          infos.resize(n + 16);
          n = static_cast<unsigned>(infos.size());
          r = nvml.nvmlDeviceGetComputeRunningProcesses(device, &n, infos.data());
        }
        if (r == NVML_SUCCESS) {
          record.processesAvailable = true;
          for (unsigned i = 0; i < n; i++) {
            ProcessRecord p{infos[i].pid, infos[i].usedGpuMemory, ""};
            char name[256] = {0};
            if (nvml.nvmlSystemGetProcessName && nvml.nvmlSystemGetProcessName(infos[i].pid, name, sizeof name) == 0)
              p.name = name;
            record.processes.push_back(p);
          }
        }
      }
      snapshot->devices.push_back(record);
    }
  };
  auto resolve = [snapshot](Napi::Env env) -> Napi::Value {
    Napi::Object out = Napi::Object::New(env);
    out.Set("driverVersion", snapshot->driverVersion);
    Napi::Array devices = Napi::Array::New(env, snapshot->devices.size());
    for (size_t i = 0; i < snapshot->devices.size(); i++) {
      const auto& d = snapshot->devices[i];
      Napi::Object o = Napi::Object::New(env);
      o.Set("index", d.index);
      o.Set("uuid", d.uuid);
      Napi::Object memory = Napi::Object::New(env);
      memory.Set("totalBytes", static_cast<double>(d.memory.total));
      memory.Set("freeBytes", static_cast<double>(d.memory.free));
      memory.Set("usedBytes", static_cast<double>(d.memory.used));
      o.Set("memory", memory);
      if (d.processesAvailable) {
        Napi::Array processes = Napi::Array::New(env, d.processes.size());
        for (size_t k = 0; k < d.processes.size(); k++) {
          Napi::Object p = Napi::Object::New(env);
          p.Set("pid", d.processes[k].pid);
          p.Set("usedBytes", d.processes[k].usedBytes == NVML_VALUE_NOT_AVAILABLE
                                 ? env.Null()
                                 : Napi::Value(Napi::Number::New(env, static_cast<double>(d.processes[k].usedBytes))));
          p.Set("name", d.processes[k].name);
          processes.Set(k, p);
        }
        o.Set("processes", processes);
      } else {
        o.Set("processes", env.Null());
      }
      devices.Set(i, o);
    }
    out.Set("devices", devices);
    return out;
  };
  return PromiseWorker::Start(info.Env(), execute, resolve);
}
