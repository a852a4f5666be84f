// NVML, from libnvidia-ml.so.1: needs no CUDA context, so the host calls it (ARCHITECTURE.md §1).
//   nvmlSnapshot()                  -> Promise<{ driverVersion, devices: [{ index, uuid, name, memory, processes }] }>
//   nvmlSample(includeProcesses)     -> Promise<Float64Array>  (one sample, off the JS thread)
//   nvmlSampleSync(includeProcesses) -> Float64Array            (the same, on the JS thread)
//   nvmlProcessName(pid)             -> Promise<string | null>
// A sample is one flat array (no object per device or process, so 100 samples a second cost little to
// build and to read), laid out as main/native/addon.ts documents: a header, then per device its memory
// and the processes NVML lists on it. Device handles are fetched once and kept.
#include <napi.h>

#include <atomic>
#include <cmath>
#include <ctime>
#include <limits>
#include <mutex>

#include "args.h"
#include "async.h"
#include "loader.h"

static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t has NVML's layout");

namespace {

struct ProcessRecord {
  unsigned pid;
  unsigned long long usedBytes;
  std::string name;
};
struct NvmlDeviceRecord {
  unsigned index;
  std::string uuid;
  std::string name;
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

// The device handles, fetched once: a handle stays valid for the life of the process (NVML's own
// documentation), and fetching them is most of what a fresh snapshot costs.
std::mutex handlesMutex;
bool handlesReady = false;
std::vector<nvmlDevice_t> handles;

bool deviceHandles(Failure& failure, std::vector<nvmlDevice_t>& out) {
  if (!ensureNvml(failure)) return false;
  std::lock_guard<std::mutex> lock(handlesMutex);
  if (!handlesReady) {
    unsigned count = 0;
    if (!checkNvml(failure, "nvmlDeviceGetCount_v2", nvml.nvmlDeviceGetCount(&count))) return false;
    std::vector<nvmlDevice_t> found(count, nullptr);
    for (unsigned i = 0; i < count; i++)
      if (!checkNvml(failure, "nvmlDeviceGetHandleByIndex_v2", nvml.nvmlDeviceGetHandleByIndex(i, &found[i]))) return false;
    handles = std::move(found);
    handlesReady = true;
  }
  out = handles;
  return true;
}

// -1: not yet known; 0: use nvmlDeviceGetMemoryInfo; 1: nvmlDeviceGetMemoryInfo_v2 works here.
std::atomic<int> memoryV2{-1};

bool readMemory(Failure& failure, nvmlDevice_t device, double& used, double& free, double& total, double& reserved) {
  if (memoryV2.load() != 0 && nvml.nvmlDeviceGetMemoryInfo_v2 != nullptr) {
    nvmlMemory_v2_t m{};
    m.version = NVML_MEMORY_V2_VERSION;
    nvmlReturn_t r = nvml.nvmlDeviceGetMemoryInfo_v2(device, &m);
    if (r == NVML_SUCCESS) {
      memoryV2.store(1);
      // `used` as v1 counts it (the driver's reserve included), so it means the same whichever call answered.
      used = static_cast<double>(m.used + m.reserved);
      free = static_cast<double>(m.free);
      total = static_cast<double>(m.total);
      reserved = static_cast<double>(m.reserved);
      return true;
    }
    if (r != NVML_ERROR_NOT_SUPPORTED && r != NVML_ERROR_FUNCTION_NOT_FOUND && r != NVML_ERROR_ARGUMENT_VERSION_MISMATCH)
      return checkNvml(failure, "nvmlDeviceGetMemoryInfo_v2", r);
    memoryV2.store(0);
  }
  nvmlMemory_t m{};
  if (!checkNvml(failure, "nvmlDeviceGetMemoryInfo", nvml.nvmlDeviceGetMemoryInfo(device, &m))) return false;
  used = static_cast<double>(m.used);
  free = static_cast<double>(m.free);
  total = static_cast<double>(m.total);
  reserved = std::numeric_limits<double>::quiet_NaN();
  return true;
}

// Lists the compute processes on a device; the count can change between the sizing call and the
// filling one, so a few tries. Returns NVML's result.
nvmlReturn_t listProcesses(nvmlDevice_t device, std::vector<nvmlProcessInfo_t>& infos, unsigned& count) {
  if (nvml.nvmlDeviceGetComputeRunningProcesses == nullptr) return NVML_ERROR_FUNCTION_NOT_FOUND;
  if (infos.size() < 64) infos.resize(64);
  nvmlReturn_t r = NVML_ERROR_INSUFFICIENT_SIZE;
  for (int attempt = 0; attempt < 4 && r == NVML_ERROR_INSUFFICIENT_SIZE; attempt++) {
    count = static_cast<unsigned>(infos.size());
    r = nvml.nvmlDeviceGetComputeRunningProcesses(device, &count, infos.data());
    if (r == NVML_ERROR_INSUFFICIENT_SIZE) infos.resize(std::min<size_t>(std::max<size_t>(count + 16, infos.size() * 2), 8192));
  }
  if (r != NVML_SUCCESS) count = 0;
  return r;
}

double nowUs(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

constexpr double SAMPLE_LAYOUT = 1;

// One sample into `out` (see main/native/addon.ts, NvmlSampleLayout, for the layout).
bool sampleInto(Failure& failure, bool includeProcesses, std::vector<double>& out) {
  std::vector<nvmlDevice_t> devices;
  double started = nowUs(CLOCK_MONOTONIC);
  if (!deviceHandles(failure, devices)) return false;
  thread_local std::vector<nvmlProcessInfo_t> infos;
  out.clear();
  out.reserve(5 + devices.size() * 8);
  out.push_back(SAMPLE_LAYOUT);
  out.push_back(nowUs(CLOCK_REALTIME));
  out.push_back(0);  // native µs, filled below
  out.push_back(0);  // of which listing processes
  out.push_back(static_cast<double>(devices.size()));
  double processUs = 0;
  for (nvmlDevice_t device : devices) {
    double used = 0, free = 0, total = 0, reserved = 0;
    if (!readMemory(failure, device, used, free, total, reserved)) return false;
    out.push_back(used);
    out.push_back(free);
    out.push_back(total);
    out.push_back(reserved);
    if (!includeProcesses) {
      out.push_back(-1);
      out.push_back(0);
      continue;
    }
    double before = nowUs(CLOCK_MONOTONIC);
    unsigned count = 0;
    nvmlReturn_t r = listProcesses(device, infos, count);
    processUs += nowUs(CLOCK_MONOTONIC) - before;
    out.push_back(static_cast<double>(r));
    out.push_back(static_cast<double>(count));
    for (unsigned i = 0; i < count; i++) {
      out.push_back(static_cast<double>(infos[i].pid));
      out.push_back(infos[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE ? std::numeric_limits<double>::quiet_NaN()
                                                                       : static_cast<double>(infos[i].usedGpuMemory));
    }
  }
  out[2] = nowUs(CLOCK_MONOTONIC) - started;
  out[3] = processUs;
  return true;
}

Napi::Float64Array toFloat64Array(Napi::Env env, const std::vector<double>& values) {
  Napi::Float64Array array = Napi::Float64Array::New(env, values.size());
  std::copy(values.begin(), values.end(), array.Data());
  return array;
}

bool includeProcessesArg(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsBoolean()) throw Napi::TypeError::New(info.Env(), "includeProcesses must be a boolean");
  return info[0].As<Napi::Boolean>().Value();
}

}  // namespace

Napi::Value NvmlSnapshot(const Napi::CallbackInfo& info) {
  auto snapshot = std::make_shared<Snapshot>();
  auto execute = [snapshot](Failure& failure) {
    if (!ensureNvml(failure)) return;
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
      char name[96] = {0};
      if (nvml.nvmlDeviceGetName != nullptr && nvml.nvmlDeviceGetName(device, name, sizeof name) == NVML_SUCCESS) record.name = name;
      if (!checkNvml(failure, "nvmlDeviceGetMemoryInfo", nvml.nvmlDeviceGetMemoryInfo(device, &record.memory))) return;
      if (nvml.nvmlDeviceGetComputeRunningProcesses != nullptr) {
        std::vector<nvmlProcessInfo_t> infos;
        unsigned n = 0;
        if (listProcesses(device, infos, n) == NVML_SUCCESS) {
          record.processesAvailable = true;
          for (unsigned i = 0; i < n; i++) {
            ProcessRecord p{infos[i].pid, infos[i].usedGpuMemory, ""};
            char processName[256] = {0};
            if (nvml.nvmlSystemGetProcessName &&
                nvml.nvmlSystemGetProcessName(infos[i].pid, processName, sizeof processName) == 0)
              p.name = processName;
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
      o.Set("name", d.name);
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

Napi::Value NvmlSample(const Napi::CallbackInfo& info) {
  bool includeProcesses = includeProcessesArg(info);
  auto values = std::make_shared<std::vector<double>>();
  auto execute = [values, includeProcesses](Failure& failure) { sampleInto(failure, includeProcesses, *values); };
  auto resolve = [values](Napi::Env env) -> Napi::Value { return toFloat64Array(env, *values); };
  return PromiseWorker::Start(info.Env(), execute, resolve);
}

Napi::Value NvmlSampleSync(const Napi::CallbackInfo& info) {
  bool includeProcesses = includeProcessesArg(info);
  thread_local std::vector<double> values;
  Failure failure;
  if (!sampleInto(failure, includeProcesses, values)) throwFailure(info.Env(), failure);
  return toFloat64Array(info.Env(), values);
}

Napi::Value NvmlProcessName(const Napi::CallbackInfo& info) {
  unsigned pid = static_cast<unsigned>(args::number(info.Env(), info[0], "pid", 1, 4294967295.0));
  auto name = std::make_shared<std::string>();
  auto found = std::make_shared<bool>(false);
  auto execute = [pid, name, found](Failure& failure) {
    if (!ensureNvml(failure)) return;
    if (nvml.nvmlSystemGetProcessName == nullptr) return;
    char text[1024] = {0};
    if (nvml.nvmlSystemGetProcessName(pid, text, sizeof text) == NVML_SUCCESS) {
      *name = text;
      *found = !name->empty();
    }
  };
  auto resolve = [name, found](Napi::Env env) -> Napi::Value {
    return *found ? Napi::Value(Napi::String::New(env, *name)) : env.Null();
  };
  return PromiseWorker::Start(info.Env(), execute, resolve);
}
