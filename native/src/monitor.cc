// NVML, from libnvidia-ml.so.1: needs no CUDA context, so the host calls it (ARCHITECTURE.md §1).
//   nvmlSnapshot()                  -> Promise<{ driverVersion, devices: [{ index, uuid, name, memory, processes }] }>
//   nvmlSample(includeProcesses)     -> Promise<Float64Array>  (one sample, off the JS thread)
//   nvmlSampleSync(includeProcesses) -> Float64Array            (the same, on the JS thread)
//   nvmlProcessName(pid)             -> Promise<string | null>
//   nvmlSamplerStart(intervalMs, processEvery) -> id   a thread of its own samples at the interval
//   nvmlSamplerTake(id) -> { samples, rows, listings, ... } what it sampled since the last take
//   nvmlSamplerStop(id) -> boolean
// A sample reaches JS as numbers, never an object per device or process, so 100 samples a second cost little
// to build and to read: one flat array for the one-off calls, rows and listings for the sampling thread, both
// laid out as main/native/addon.ts documents. Device handles are fetched once and kept.
#include <napi.h>

#ifdef __linux__
#include <sys/timerfd.h>
#include <unistd.h>
#endif

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
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

// One sample as NVML answered it; laid out flat for the one-off calls (toFlat) or into a sampling thread's
// batch (appendTo), so neither layout is read back to make the other.
struct Sample {
  double timeUs = 0;  // wall clock, µs since the epoch
  double nativeUs = 0;
  double processUs = 0;                 // of nativeUs, spent listing processes
  std::vector<double> memory;           // per device: used, free, total, reserved (NaN: not reported)
  bool listed = false;                  // whether `listing` holds every device's processes
  std::vector<double> listing;          // per device: status, P, P × (pid, used)
};

// One sample into `out`.
// With `usedBefore` (the sampling thread), processes are also listed on a device whose used memory moved since
// the last sample (on every device then), though `includeProcesses` is false: a process's memory cannot change while the device's
// stays put (but for one freeing exactly what another takes between two samples, which the periodic listing
// catches). Listing processes costs NVML about as much as the memory query; most samples need none.
// `startedUs` is the monotonic time the caller read just before; the monotonic time at the end is returned
// through `endedUs`, so the sampling thread reads the clock three times a sample (that and the wall time),
// not five.
bool sampleInto(Failure& failure, const std::vector<nvmlDevice_t>& devices, bool includeProcesses, Sample& out,
                double startedUs, double& endedUs, std::vector<double>* usedBefore = nullptr) {
  thread_local std::vector<nvmlProcessInfo_t> infos;
  out.timeUs = std::round(nowUs(CLOCK_REALTIME));
  out.processUs = 0;
  out.memory.assign(devices.size() * 4, 0);
  out.listing.clear();
  bool moved = false;
  if (usedBefore) usedBefore->resize(devices.size(), -1);
  for (size_t d = 0; d < devices.size(); d++) {
    double* m = &out.memory[d * 4];
    if (!readMemory(failure, devices[d], m[0], m[1], m[2], m[3])) return false;
    if (usedBefore) {
      moved = moved || (*usedBefore)[d] != m[0];
      (*usedBefore)[d] = m[0];
    }
  }
  // Every device's processes or none: a sample lists a device's processes only beside all the others'.
  out.listed = includeProcesses || moved;
  for (size_t d = 0; out.listed && d < devices.size(); d++) {
    double before = nowUs(CLOCK_MONOTONIC);
    unsigned count = 0;
    nvmlReturn_t r = listProcesses(devices[d], infos, count);
    out.processUs += nowUs(CLOCK_MONOTONIC) - before;
    out.listing.push_back(static_cast<double>(r));
    out.listing.push_back(static_cast<double>(count));
    for (unsigned i = 0; i < count; i++) {
      out.listing.push_back(static_cast<double>(infos[i].pid));
      out.listing.push_back(infos[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE ? std::numeric_limits<double>::quiet_NaN()
                                                                               : static_cast<double>(infos[i].usedGpuMemory));
    }
  }
  endedUs = nowUs(CLOCK_MONOTONIC);
  out.nativeUs = endedUs - startedUs;
  return true;
}

// The flat layout of main/native/addon.ts, NvmlSampleLayout: a header, then per device its memory and its
// processes (status -1 and none where the sample listed none).
void toFlat(const Sample& sample, std::vector<double>& out) {
  const size_t deviceCount = sample.memory.size() / 4;
  out.clear();
  out.reserve(5 + deviceCount * 6 + sample.listing.size());
  out.insert(out.end(), {SAMPLE_LAYOUT, sample.timeUs, sample.nativeUs, sample.processUs, static_cast<double>(deviceCount)});
  size_t at = 0;
  for (size_t d = 0; d < deviceCount; d++) {
    out.insert(out.end(), sample.memory.begin() + d * 4, sample.memory.begin() + d * 4 + 4);
    if (!sample.listed) {
      out.insert(out.end(), {-1, 0});
      continue;
    }
    const size_t entries = 2 + 2 * static_cast<size_t>(sample.listing[at + 1]);
    out.insert(out.end(), sample.listing.begin() + at, sample.listing.begin() + at + entries);
    at += entries;
  }
}

// One sample with fresh handles, for the one-off calls (nvmlSample, nvmlSampleSync).
bool sampleOnce(Failure& failure, bool includeProcesses, std::vector<double>& out) {
  std::vector<nvmlDevice_t> devices;
  double started = nowUs(CLOCK_MONOTONIC);
  if (!deviceHandles(failure, devices)) return false;
  double ended = 0;
  thread_local Sample sample;
  if (!sampleInto(failure, devices, includeProcesses, sample, started, ended)) return false;
  toFlat(sample, out);
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
  auto execute = [values, includeProcesses](Failure& failure) { sampleOnce(failure, includeProcesses, *values); };
  auto resolve = [values](Napi::Env env) -> Napi::Value { return toFloat64Array(env, *values); };
  return PromiseWorker::Start(info.Env(), execute, resolve);
}

Napi::Value NvmlSampleSync(const Napi::CallbackInfo& info) {
  bool includeProcesses = includeProcessesArg(info);
  thread_local std::vector<double> values;
  Failure failure;
  if (!sampleOnce(failure, includeProcesses, values)) throwFailure(info.Env(), failure);
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

// A sampling thread: samples every interval on a periodic timer of the monotonic clock (a call that overruns
// makes the ticks it missed skipped, counted), into a batch the JS thread takes about once a second. No JS wakes
// per sample, and a driver that wedges blocks this thread only: the JS side sees no new samples and how long
// the call in flight has run. Stopping sets a flag and fires the timer; one blocked in NVML leaves when NVML
// returns (it is detached and owns its state).
// At 100 Hz on a VM where every kernel entry is dear, what the thread does besides NVML shows in the host's
// CPU, and so does what the JS thread does with each sample:
// - a periodic timerfd is re-armed by the kernel; a timed condition-variable wait arms a timer from this thread
//   at every tick (H100 VM, 100 Hz, wake-ups alone: 0.25–0.28% of a core against 0.32–0.35%);
// - the thread keeps its device handles, reads the clock three times a sample, and fills batches sized up front (two,
//   swapped at each take, so neither grows nor goes back to the allocator while sampling runs);
// - a batch is in the layout the JS sample store keeps (rows of time and each device's used, free and total
//   bytes), so taking it in is a copy, not a loop that makes an object per sample; the few samples that list
//   processes come apart, in `listings`.
namespace {

constexpr size_t MAX_BUFFERED_VALUES = 1 << 20;  // 8 MiB of samples not yet taken; past it new ones are dropped
// Values reserved up front in each batch: two seconds of samples.
constexpr double RESERVED_SECONDS = 2;

// What the thread sampled since the last take (laid out as main/native/addon.ts, NvmlSamplerTake, says).
struct Batch {
  double samples = 0;
  std::vector<double> rows;      // per sample: time (µs since the epoch), then per device used, free, total
  std::vector<double> listings;  // per sample that listed processes: its row, then per device status, P, P × (pid, used)
  std::vector<double> reserved;  // the newest sample's reserve per device
  double nativeUs = 0;
  double processUs = 0;

  void clear() {
    samples = 0;
    rows.clear();
    listings.clear();
    nativeUs = processUs = 0;
  }
  size_t values() const { return rows.size() + listings.size(); }
};

// Values `sample` adds to a batch.
size_t batchValues(const Sample& sample) {
  return 1 + 3 * (sample.memory.size() / 4) + (sample.listed ? 1 + sample.listing.size() : 0);
}

void appendTo(const Sample& sample, Batch& batch) {
  const size_t deviceCount = sample.memory.size() / 4;
  batch.rows.push_back(sample.timeUs);
  batch.reserved.resize(deviceCount);
  for (size_t d = 0; d < deviceCount; d++) {
    batch.rows.insert(batch.rows.end(), sample.memory.begin() + d * 4, sample.memory.begin() + d * 4 + 3);
    batch.reserved[d] = sample.memory[d * 4 + 3];
  }
  if (sample.listed) {
    batch.listings.push_back(batch.samples);
    batch.listings.insert(batch.listings.end(), sample.listing.begin(), sample.listing.end());
  }
  batch.nativeUs += sample.nativeUs;
  batch.processUs += sample.processUs;
  batch.samples++;
}

struct Sampler {
  std::mutex mutex;
  bool stop = false;
  bool running = true;
  Batch pending;
  // The batch a take copies out of, then clears and offers back at the next (under takeMutex only).
  std::mutex takeMutex;
  Batch spare;
  double dropped = 0;
  double skipped = 0;
  double errors = 0;
  double consecutiveErrors = 0;
  Failure lastFailure;
  std::atomic<int64_t> callStartedNs{0};
  std::chrono::nanoseconds interval{0};
  uint32_t processEvery = 0;
  std::vector<nvmlDevice_t> devices;
#ifdef __linux__
  int timer = -1;
  ~Sampler() {
    if (timer >= 0) close(timer);
  }
#else
  std::condition_variable wake;
#endif
};

std::mutex& samplersMutex = *new std::mutex;
std::map<uint32_t, std::shared_ptr<Sampler>>& samplers = *new std::map<uint32_t, std::shared_ptr<Sampler>>;
uint32_t nextSamplerId = 1;

constexpr double usPerNs = 1e-3;

#ifdef __linux__
void timerFailure(Failure& failure, const char* api, int error) {
  failure.failed = true;
  failure.library = "workbench";
  failure.api = api;
  failure.code = error;
  failure.name = "WORKBENCH_TIMER_FAILED";
  failure.message = std::string("the sampling thread's timer failed: ") + std::strerror(error);
}

// The first tick at once, then one every interval; fired at once again to stop.
bool armTimer(int timer, std::chrono::nanoseconds interval) {
  itimerspec spec{};
  spec.it_interval.tv_sec = static_cast<time_t>(interval.count() / 1000000000);
  spec.it_interval.tv_nsec = static_cast<long>(interval.count() % 1000000000);
  spec.it_value.tv_nsec = 1;
  return timerfd_settime(timer, 0, &spec, nullptr) == 0;
}

// Blocks until the next tick; returns the ticks that passed (more than one: some were missed), 0 on stop.
uint64_t waitTick(Sampler& s, std::unique_lock<std::mutex>& lock) {
  lock.unlock();
  uint64_t expirations = 0;
  ssize_t n;
  do n = read(s.timer, &expirations, sizeof expirations);
  while (n < 0 && errno == EINTR);
  const int error = errno;
  lock.lock();
  if (s.stop) return 0;
  if (n != sizeof expirations) {
    // Never seen: the thread ends, and says why (the JS side reports a thread that is no longer running).
    timerFailure(s.lastFailure, "read(timerfd)", error);
    return 0;
  }
  return expirations;
}
#endif

void runSampler(std::shared_ptr<Sampler> s) {
  Sample sample;
  std::vector<double> usedBefore;
  uint64_t tick = 0;
#ifndef __linux__
  const int64_t intervalNs = s->interval.count();
  int64_t nextNs = static_cast<int64_t>(nowUs(CLOCK_MONOTONIC) / usPerNs);
#endif
  std::unique_lock<std::mutex> lock(s->mutex);
#ifdef __linux__
  // Armed here, not at the start call, so the time the thread takes to start counts no tick as missed.
  if (!s->stop && !armTimer(s->timer, s->interval)) {
    timerFailure(s->lastFailure, "timerfd_settime", errno);
    s->running = false;
    return;
  }
#endif
  for (;;) {
#ifdef __linux__
    // A tick that came while the last call ran is taken late, not skipped; only ticks that passed
    // whole while it ran (more than one expiration) are.
    const uint64_t ticks = waitTick(*s, lock);
    if (ticks == 0) break;
    if (ticks > 1) {
      s->skipped += static_cast<double>(ticks - 1);
      tick += ticks - 1;
    }
#endif
    lock.unlock();
    bool withProcesses = s->processEvery > 0 && tick % s->processEvery == 0;
    Failure failure;
    double startedUs = nowUs(CLOCK_MONOTONIC);
    double endedUs = startedUs;
    s->callStartedNs.store(static_cast<int64_t>(startedUs / usPerNs));
    bool ok = sampleInto(failure, s->devices, withProcesses, sample, startedUs, endedUs, s->processEvery > 0 ? &usedBefore : nullptr);
    s->callStartedNs.store(0);
    lock.lock();
    if (ok) {
      s->consecutiveErrors = 0;
      if (s->pending.values() + batchValues(sample) <= MAX_BUFFERED_VALUES) {
        appendTo(sample, s->pending);
      } else {
        s->dropped++;
      }
    } else {
      s->errors++;
      s->consecutiveErrors++;
      s->lastFailure = failure;
    }
    tick++;
#ifndef __linux__
    if (!ok) endedUs = nowUs(CLOCK_MONOTONIC);
    nextNs += intervalNs;
    const int64_t nowNs = static_cast<int64_t>(endedUs / usPerNs);
    if (nextNs < nowNs) {
      const int64_t missed = (nowNs - nextNs) / intervalNs + 1;
      s->skipped += static_cast<double>(missed);
      tick += static_cast<uint64_t>(missed);
      nextNs += missed * intervalNs;
    }
    // steady_clock is CLOCK_MONOTONIC (libstdc++ and libc++), so the wait ends at the tick.
    const std::chrono::steady_clock::time_point next{std::chrono::nanoseconds(nextNs)};
    if (s->wake.wait_until(lock, next, [&] { return s->stop; })) break;
#endif
  }
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
  s->devices = devices;
  const double perSample = 1 + 3 * static_cast<double>(devices.size());
  const size_t reserved = static_cast<size_t>(
      std::min(static_cast<double>(MAX_BUFFERED_VALUES), perSample * std::ceil(RESERVED_SECONDS * 1000 / intervalMs)));
  for (Batch* b : {&s->pending, &s->spare}) {
    b->rows.reserve(reserved);
    b->listings.reserve(64 * devices.size());
  }
#ifdef __linux__
  s->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  if (s->timer < 0) {
    const int error = errno;
    timerFailure(failure, "timerfd_create", error);
    throwFailure(env, failure);
  }
#endif
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
  std::lock_guard<std::mutex> taking(s->takeMutex);
  Batch& taken = s->spare;  // its capacity kept from the last take
  taken.clear();            // empty already, unless that take threw before clearing it
  Napi::Object out = Napi::Object::New(env);
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    std::swap(taken, s->pending);
    s->pending.reserved = taken.reserved;
    out.Set("dropped", s->dropped);
    out.Set("skipped", s->skipped);
    out.Set("errors", s->errors);
    out.Set("consecutiveErrors", s->consecutiveErrors);
    out.Set("lastError", s->lastFailure.failed ? toJsError(env, s->lastFailure).Value() : env.Null());
    out.Set("running", s->running);
  }
  int64_t started = s->callStartedNs.load();
  out.Set("inFlightMs", started == 0 ? 0.0 : (nowUs(CLOCK_MONOTONIC) - static_cast<double>(started) * usPerNs) / 1e3);
  out.Set("samples", taken.samples);
  out.Set("rows", toFloat64Array(env, taken.rows));
  out.Set("listings", toFloat64Array(env, taken.listings));
  out.Set("reserved", toFloat64Array(env, taken.reserved));
  out.Set("nativeUs", taken.nativeUs);
  out.Set("processUs", taken.processUs);
  taken.clear();
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
#ifdef __linux__
  itimerspec now{};
  now.it_value.tv_nsec = 1;
  timerfd_settime(s->timer, 0, &now, nullptr);
#else
  s->wake.notify_all();
#endif
  return Napi::Boolean::New(info.Env(), true);
}
