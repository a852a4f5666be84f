// The raw reference for `npm run bench:nvml`: what sampling device memory through NVML costs a bare C++
// program — no Node, no addon, no ring buffer, no JS — so the workbench's cost can be read against the floor
// that the driver and the machine set. bench/nvml-sampling.ts builds and runs it between its own runs:
//
//   c++ -O2 -std=c++17 -I native/src bench/native/nvml-floor.cc -o nvml-floor -ldl -pthread
//   ./nvml-floor SECONDS INTERVAL_MS PROCESS_EVERY [WARMUP_SECONDS]
//
// It does what the workbench's sampling thread does at its default, and nothing else: every INTERVAL_MS the
// memory query on each device (a periodic timerfd, as the thread's, between), and every PROCESS_EVERY-th
// tick (0: never) the process listing. After WARMUP_SECONDS of that (as the bench lets the workbench's
// sampler run before measuring it), it prints one JSON line: the share of one core the whole process used
// (getrusage) over the measured wall time, the samples and the wake-ups a second (context switches) in it,
// and the per-call CPU of the memory query in a tight loop
// (which is far below what one call costs at 100 Hz, when caches and the CPU have gone cold). Exits 2
// without NVML.
#include <dlfcn.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda_types.h"

namespace {

using InitFn = nvmlReturn_t (*)();
using CountFn = nvmlReturn_t (*)(unsigned*);
using HandleFn = nvmlReturn_t (*)(unsigned, nvmlDevice_t*);
using MemoryV2Fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*);
using ProcessesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*);

MemoryV2Fn memoryV2 = nullptr;
ProcessesFn processes = nullptr;
std::vector<nvmlDevice_t> devices;

double threadCpuUs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

double processCpuUs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double contextSwitches() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_nvcsw + u.ru_nivcsw);
}

bool queryMemory() {
  bool ok = true;
  for (auto d : devices) {
    nvmlMemory_v2_t m{};
    m.version = NVML_MEMORY_V2_VERSION;
    ok = memoryV2(d, &m) == NVML_SUCCESS && ok;
  }
  return ok;
}

void listProcesses() {
  static std::vector<nvmlProcessInfo_t> infos(64);
  for (auto d : devices) {
    unsigned count = static_cast<unsigned>(infos.size());
    processes(d, &count, infos.data());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: nvml-floor SECONDS INTERVAL_MS PROCESS_EVERY [WARMUP_SECONDS]\n");
    return 64;
  }
  const double seconds = std::atof(argv[1]);
  const long intervalMs = std::atol(argv[2]);
  const long processEvery = std::atol(argv[3]);
  const double warmupSeconds = argc == 5 ? std::atof(argv[4]) : 0;
  if (seconds <= 0 || intervalMs <= 0 || processEvery < 0 || warmupSeconds < 0) {
    std::fprintf(stderr, "nvml-floor: SECONDS and INTERVAL_MS must be positive, PROCESS_EVERY and WARMUP_SECONDS at least 0\n");
    return 64;
  }
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "No NVML here (libnvidia-ml.so.1 did not load): nothing to measure.\n");
    return 2;
  }
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
  auto count = reinterpret_cast<CountFn>(dlsym(lib, "nvmlDeviceGetCount_v2"));
  auto handle = reinterpret_cast<HandleFn>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  memoryV2 = reinterpret_cast<MemoryV2Fn>(dlsym(lib, "nvmlDeviceGetMemoryInfo_v2"));
  processes = reinterpret_cast<ProcessesFn>(dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
  unsigned n = 0;
  if (!init || !count || !handle || !memoryV2 || !processes || init() != NVML_SUCCESS || count(&n) != NVML_SUCCESS) {
    std::fprintf(stderr, "NVML is here but did not start, or lacks a call this needs.\n");
    return 2;
  }
  devices.resize(n);
  for (unsigned i = 0; i < n; i++) handle(i, &devices[i]);

  constexpr int TIGHT_CALLS = 2000;
  for (int i = 0; i < 50; i++) queryMemory();
  const double tight0 = threadCpuUs();
  for (int i = 0; i < TIGHT_CALLS; i++) queryMemory();
  const double tightUs = (threadCpuUs() - tight0) / TIGHT_CALLS;

  // The sampling thread's wait: a periodic timer the kernel re-arms, read once a tick.
  const int timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  itimerspec period{};
  period.it_interval.tv_sec = intervalMs / 1000;
  period.it_interval.tv_nsec = (intervalMs % 1000) * 1000000;
  period.it_value.tv_nsec = 1;
  if (timer < 0 || timerfd_settime(timer, 0, &period, nullptr) != 0) {
    std::fprintf(stderr, "nvml-floor: the timer failed: %s\n", std::strerror(errno));
    return 1;
  }
  const long warmupTicks = static_cast<long>(warmupSeconds * 1000 / static_cast<double>(intervalMs));
  const long ticks = warmupTicks + static_cast<long>(seconds * 1000 / static_cast<double>(intervalMs));
  long samples = 0;
  double cpu0 = processCpuUs();
  double switches0 = contextSwitches();
  auto t0 = std::chrono::steady_clock::now();
  for (long tick = 0; tick < ticks; tick++) {
    uint64_t expirations = 0;
    while (read(timer, &expirations, sizeof expirations) < 0 && errno == EINTR) {
    }
    if (tick == warmupTicks) {
      cpu0 = processCpuUs();
      switches0 = contextSwitches();
      t0 = std::chrono::steady_clock::now();
      samples = 0;
    }
    if (queryMemory()) samples++;
    if (processEvery > 0 && tick % processEvery == 0) listProcesses();
  }
  const double wallUs = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  std::printf("{\"percent\":%.4f,\"samples\":%ld,\"wakesPerSecond\":%.1f,\"wallMs\":%.1f,\"tightCallCpuUs\":%.2f,\"devices\":%u}\n",
              (processCpuUs() - cpu0) / wallUs * 100, samples, (contextSwitches() - switches0) / wallUs * 1e6, wallUs / 1000, tightUs, n);
  return 0;
}
