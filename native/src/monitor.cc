// NVML, from libnvidia-ml.so.1: needs no CUDA context, so the host calls it (ARCHITECTURE.md §1).
//   nvmlSnapshot()                  -> Promise<{ driverVersion, devices: [{ index, uuid, name, memory, processes }] }>
//   nvmlSample(includeProcesses)     -> Promise<Float64Array>  (one sample, off the JS thread)
//   nvmlSampleSync(includeProcesses) -> Float64Array            (the same, on the JS thread)
//   nvmlProcessName(pid)             -> Promise<string | null>
//   nvmlSamplerStart(intervalMs, processEvery) -> id   a thread of its own samples at the interval
//   nvmlSamplerTake(id) -> { data, samples, ... }       what it sampled since the last take
//   nvmlSamplerStop(id) -> boolean
// A sample is one flat array (no object per device or process, so 100 samples a second cost little to
// build and to read), laid out as main/native/addon.ts documents: a header, then per device its memory
// and the processes NVML lists on it. Device handles are fetched once and kept.
#include <napi.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <ctime>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "args.h"
#include "async.h"
#include "loader.h"
#include "nvml_init.h"

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


// The device handles, fetched once: a handle stays valid for the life of the process (NVML's own
// documentation), and fetching them is most of what a fresh snapshot costs.
// Never destroyed: a sampling thread may still read them while the process exits.
std::mutex& handlesMutex = *new std::mutex;
bool handlesReady = false;
std::vector<nvmlDevice_t>& handles = *new std::vector<nvmlDevice_t>;

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
// With `usedBefore` (the sampling thread), processes are also listed on a device whose used memory moved since
// the last sample (on every device then), though `includeProcesses` is false: a process's memory cannot change while the device's
// stays put (but for one freeing exactly what another takes between two samples, which the periodic listing
// catches). Listing processes costs NVML about as much as the memory query; most samples need none.
bool sampleInto(Failure& failure, bool includeProcesses, std::vector<double>& out,
                std::vector<double>* usedBefore = nullptr) {
  std::vector<nvmlDevice_t> devices;
  double started = nowUs(CLOCK_MONOTONIC);
  if (!deviceHandles(failure, devices)) return false;
  thread_local std::vector<nvmlProcessInfo_t> infos;
  out.clear();
  out.reserve(5 + devices.size() * 8);
  out.push_back(SAMPLE_LAYOUT);
  out.push_back(std::round(nowUs(CLOCK_REALTIME)));
  out.push_back(0);  // native µs, filled below
  out.push_back(0);  // of which listing processes
  out.push_back(static_cast<double>(devices.size()));
  double processUs = 0;
  thread_local std::vector<double> memory;
  memory.assign(devices.size() * 4, 0);
  bool moved = false;
  if (usedBefore) usedBefore->resize(devices.size(), -1);
  for (size_t d = 0; d < devices.size(); d++) {
    double* m = &memory[d * 4];
    if (!readMemory(failure, devices[d], m[0], m[1], m[2], m[3])) return false;
    if (usedBefore) {
      moved = moved || (*usedBefore)[d] != m[0];
      (*usedBefore)[d] = m[0];
    }
  }
  // Every device's processes or none: a sample lists a device's processes only beside all the others'.
  bool listing = includeProcesses || moved;
  for (size_t d = 0; d < devices.size(); d++) {
    out.insert(out.end(), memory.begin() + d * 4, memory.begin() + d * 4 + 4);
    if (!listing) {
      out.push_back(-1);
      out.push_back(0);
      continue;
    }
    double before = nowUs(CLOCK_MONOTONIC);
    unsigned count = 0;
    nvmlReturn_t r = listProcesses(devices[d], infos, count);
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

// A sampling thread: samples every interval against the monotonic clock (a call that overruns skips the
// ticks it missed, counted), into a buffer the JS thread drains a few times a second. No JS wakes per sample,
// and a driver that wedges blocks this thread only: the JS side sees no new samples and how long the call in
// flight has run. Stopping sets a flag and wakes the thread; one blocked in NVML leaves when NVML returns
// (it is detached and owns its state).
namespace {

constexpr size_t MAX_BUFFERED_VALUES = 1 << 20;  // 8 MiB of samples not yet taken; past it new ones are dropped

struct Sampler {
  std::mutex mutex;
  std::condition_variable wake;
  bool stop = false;
  bool running = true;
  std::vector<double> pending;
  double pendingSamples = 0;
  double dropped = 0;
  double skipped = 0;
  double errors = 0;
  double consecutiveErrors = 0;
  Failure lastFailure;
  std::atomic<int64_t> callStartedNs{0};
  std::chrono::nanoseconds interval{0};
  uint32_t processEvery = 0;
};

std::mutex& samplersMutex = *new std::mutex;
std::map<uint32_t, std::shared_ptr<Sampler>>& samplers = *new std::map<uint32_t, std::shared_ptr<Sampler>>;
uint32_t nextSamplerId = 1;

int64_t monotonicNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void runSampler(std::shared_ptr<Sampler> s) {
  std::vector<double> values;
  std::vector<double> usedBefore;
  uint64_t tick = 0;
  auto next = std::chrono::steady_clock::now();
  for (;;) {
    bool withProcesses = s->processEvery > 0 && tick % s->processEvery == 0;
    Failure failure;
    s->callStartedNs.store(monotonicNs());
    bool ok = sampleInto(failure, withProcesses, values, s->processEvery > 0 ? &usedBefore : nullptr);
    s->callStartedNs.store(0);
    std::unique_lock<std::mutex> lock(s->mutex);
    if (ok) {
      s->consecutiveErrors = 0;
      if (s->pending.size() + values.size() <= MAX_BUFFERED_VALUES) {
        s->pending.insert(s->pending.end(), values.begin(), values.end());
        s->pendingSamples++;
      } else {
        s->dropped++;
      }
    } else {
      s->errors++;
      s->consecutiveErrors++;
      s->lastFailure = failure;
    }
    tick++;
    next += s->interval;
    auto now = std::chrono::steady_clock::now();
    if (next < now) {
      auto missed = (now - next) / s->interval + 1;
      s->skipped += static_cast<double>(missed);
      tick += static_cast<uint64_t>(missed);
      next += missed * s->interval;
    }
    if (s->wake.wait_until(lock, next, [&] { return s->stop; })) break;
  }
  std::lock_guard<std::mutex> lock(s->mutex);
  s->running = false;
}

std::shared_ptr<Sampler> samplerById(const Napi::CallbackInfo& info) {
  uint32_t id = static_cast<uint32_t>(args::number(info.Env(), info[0], "id", 1, 4294967295.0));
  std::lock_guard<std::mutex> lock(samplersMutex);
  auto found = samplers.find(id);
  return found == samplers.end() ? nullptr : found->second;
}

}  // namespace

Napi::Value NvmlSamplerStart(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  double intervalMs = args::number(env, info[0], "intervalMs", 1, 3600000);
  double processEvery = args::number(env, info[1], "processEvery", 0, 1000000);
  Failure failure;
  std::vector<nvmlDevice_t> devices;
  if (!deviceHandles(failure, devices)) throwFailure(env, failure);
  auto s = std::make_shared<Sampler>();
  s->interval = std::chrono::milliseconds(static_cast<int64_t>(intervalMs));
  s->processEvery = static_cast<uint32_t>(processEvery);
  uint32_t id;
  {
    std::lock_guard<std::mutex> lock(samplersMutex);
    id = nextSamplerId++;
    samplers[id] = s;
  }
  std::thread(runSampler, s).detach();
  return Napi::Number::New(env, id);
}

Napi::Value NvmlSamplerTake(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto s = samplerById(info);
  if (!s) throw Napi::RangeError::New(env, "no sampler has that id (stopped already?)");
  std::vector<double> taken;
  Napi::Object out = Napi::Object::New(env);
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    taken.swap(s->pending);
    out.Set("samples", s->pendingSamples);
    s->pendingSamples = 0;
    out.Set("dropped", s->dropped);
    out.Set("skipped", s->skipped);
    out.Set("errors", s->errors);
    out.Set("consecutiveErrors", s->consecutiveErrors);
    out.Set("lastError", s->errors > 0 ? toJsError(env, s->lastFailure).Value() : env.Null());
    out.Set("running", s->running);
  }
  int64_t started = s->callStartedNs.load();
  out.Set("inFlightMs", started == 0 ? 0.0 : static_cast<double>(monotonicNs() - started) / 1e6);
  out.Set("data", toFloat64Array(env, taken));
  return out;
}

Napi::Value NvmlSamplerStop(const Napi::CallbackInfo& info) {
  auto s = samplerById(info);
  if (!s) return Napi::Boolean::New(info.Env(), false);
  {
    std::lock_guard<std::mutex> lock(samplersMutex);
    samplers.erase(static_cast<uint32_t>(info[0].As<Napi::Number>().Uint32Value()));
  }
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    s->stop = true;
  }
  s->wake.notify_all();
  return Napi::Boolean::New(info.Env(), true);
}
