// nvmlHealth() -> Promise<{ driverVersion, cudaDriverVersion, devices: [...] }>: what the doctor asks NVML about
// each GPU's state — persistence, compute and MIG modes, ECC counts, retired pages and remapped rows, clock event
// reasons — with no CUDA context. Every query is optional and answers for itself: an older driver may lack the
// symbol, and NOT_SUPPORTED (GeForce, Windows, a Hopper asked about page retirement) is an answer, not a failure, so
// each field carries NVML's own return code. Only NVML's initialisation and device count can fail the whole call.
// The caller bounds it in time (main/doctor/time-limit.ts): a wedged GPU can block inside NVML.
#include <napi.h>

#include <cstring>
#include <string>
#include <vector>

#include "async.h"
#include "loader.h"
#include "nvml_init.h"

namespace {

constexpr int kSymbolMissing = -1;  // our code for "this NVML lacks the entry point"
// nvmlMemoryErrorType_t and nvmlEccCounterType_t (nvml.h).
constexpr int kCorrected = 0, kUncorrected = 1, kVolatile = 0, kAggregate = 1;
// nvmlPageRetirementCause_t: MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0, DOUBLE_BIT_ECC_ERROR = 1.
constexpr int kRetiredSingleBit = 0, kRetiredDoubleBit = 1;
constexpr unsigned kRetiredPageBuffer = 256;

template <typename T>
struct Answer {
  const char* api = "";
  int code = kSymbolMissing;
  T value{};
};

struct Rows {
  unsigned correctable = 0, uncorrectable = 0, pending = 0, failed = 0;
};
struct Pair {
  unsigned first = 0, second = 0;
};

struct DeviceHealth {
  unsigned index = 0;
  Answer<std::string> name, uuid, pciBusId;
  Answer<int> persistence, displayActive, computeMode;
  Answer<Pair> mig;
  Answer<Pair> ecc;
  Answer<unsigned long long> volatileCorrected, volatileUncorrected, aggregateCorrected, aggregateUncorrected;
  Answer<Pair> retiredPages;
  Answer<int> retiredPending;
  Answer<Rows> remapped;
  Answer<unsigned long long> clocksEventReasons;
};

struct Health {
  Answer<std::string> driverVersion;
  Answer<int> cudaDriverVersion;
  std::vector<DeviceHealth> devices;
};

// Runs `call` when the entry point exists; records the api name and NVML's answer.
template <typename T, typename Fn, typename Call>
void ask(Answer<T>& answer, const char* api, Fn* fn, Call call) {
  answer.api = api;
  answer.code = fn == nullptr ? kSymbolMissing : call(fn);
}

void askCounts(Answer<unsigned long long>& out, const char* api, int type, int counter, nvmlDevice_t device) {
  ask(out, api, nvmlHealthApi.nvmlDeviceGetTotalEccErrors,
      [&](auto fn) { return fn(device, type, counter, &out.value); });
}

// Pages retired for one cause: NVML_ERROR_INSUFFICIENT_SIZE still sets `count` to the number there are.
nvmlReturn_t retiredCount(nvmlDevice_t device, int cause, unsigned& count) {
  std::vector<unsigned long long> addresses(kRetiredPageBuffer);
  count = kRetiredPageBuffer;
  nvmlReturn_t r = nvmlHealthApi.nvmlDeviceGetRetiredPages(device, cause, &count, addresses.data());
  return r == NVML_ERROR_INSUFFICIENT_SIZE ? NVML_SUCCESS : r;
}

void queryDevice(DeviceHealth& d, nvmlDevice_t device) {
  const auto& h = nvmlHealthApi;
  char text[128] = {0};
  ask(d.name, "nvmlDeviceGetName", h.nvmlDeviceGetName, [&](auto fn) { return fn(device, text, sizeof text); });
  d.name.value = text;
  char uuid[96] = {0};
  ask(d.uuid, "nvmlDeviceGetUUID", nvml.nvmlDeviceGetUUID, [&](auto fn) { return fn(device, uuid, sizeof uuid); });
  d.uuid.value = uuid;
  NvmlPciInfoV3 pci{};
  ask(d.pciBusId, "nvmlDeviceGetPciInfo_v3", h.nvmlDeviceGetPciInfo, [&](auto fn) { return fn(device, &pci); });
  d.pciBusId.value = std::string(pci.busId, strnlen(pci.busId, sizeof pci.busId));
  ask(d.persistence, "nvmlDeviceGetPersistenceMode", h.nvmlDeviceGetPersistenceMode,
      [&](auto fn) { return fn(device, &d.persistence.value); });
  ask(d.displayActive, "nvmlDeviceGetDisplayActive", h.nvmlDeviceGetDisplayActive,
      [&](auto fn) { return fn(device, &d.displayActive.value); });
  ask(d.computeMode, "nvmlDeviceGetComputeMode", h.nvmlDeviceGetComputeMode,
      [&](auto fn) { return fn(device, &d.computeMode.value); });
  ask(d.mig, "nvmlDeviceGetMigMode", h.nvmlDeviceGetMigMode,
      [&](auto fn) { return fn(device, &d.mig.value.first, &d.mig.value.second); });
  int eccCurrent = 0, eccPending = 0;
  ask(d.ecc, "nvmlDeviceGetEccMode", h.nvmlDeviceGetEccMode, [&](auto fn) { return fn(device, &eccCurrent, &eccPending); });
  d.ecc.value = {static_cast<unsigned>(eccCurrent), static_cast<unsigned>(eccPending)};
  askCounts(d.volatileCorrected, "nvmlDeviceGetTotalEccErrors", kCorrected, kVolatile, device);
  askCounts(d.volatileUncorrected, "nvmlDeviceGetTotalEccErrors", kUncorrected, kVolatile, device);
  askCounts(d.aggregateCorrected, "nvmlDeviceGetTotalEccErrors", kCorrected, kAggregate, device);
  askCounts(d.aggregateUncorrected, "nvmlDeviceGetTotalEccErrors", kUncorrected, kAggregate, device);
  ask(d.retiredPages, "nvmlDeviceGetRetiredPages", h.nvmlDeviceGetRetiredPages, [&](auto) {
    nvmlReturn_t r = retiredCount(device, kRetiredSingleBit, d.retiredPages.value.first);
    return r != NVML_SUCCESS ? r : retiredCount(device, kRetiredDoubleBit, d.retiredPages.value.second);
  });
  ask(d.retiredPending, "nvmlDeviceGetRetiredPagesPendingStatus", h.nvmlDeviceGetRetiredPagesPendingStatus,
      [&](auto fn) { return fn(device, &d.retiredPending.value); });
  ask(d.remapped, "nvmlDeviceGetRemappedRows", h.nvmlDeviceGetRemappedRows, [&](auto fn) {
    Rows& r = d.remapped.value;
    return fn(device, &r.correctable, &r.uncorrectable, &r.pending, &r.failed);
  });
  // The "event reasons" name arrived with driver 535; older drivers export only the "throttle reasons" one.
  if (h.nvmlDeviceGetCurrentClocksEventReasons != nullptr)
    ask(d.clocksEventReasons, "nvmlDeviceGetCurrentClocksEventReasons", h.nvmlDeviceGetCurrentClocksEventReasons,
        [&](auto fn) { return fn(device, &d.clocksEventReasons.value); });
  else
    ask(d.clocksEventReasons, "nvmlDeviceGetCurrentClocksThrottleReasons", h.nvmlDeviceGetCurrentClocksThrottleReasons,
        [&](auto fn) { return fn(device, &d.clocksEventReasons.value); });
}

// Every field of a device whose handle could not be had carries the handle's answer (GPU_IS_LOST, ...).
void failDevice(DeviceHealth& d, nvmlReturn_t code) {
  for (auto* a : {&d.name, &d.uuid, &d.pciBusId}) *a = {"nvmlDeviceGetHandleByIndex_v2", code, {}};
  for (auto* a : {&d.persistence, &d.displayActive, &d.computeMode, &d.retiredPending})
    *a = {"nvmlDeviceGetHandleByIndex_v2", code, 0};
  for (auto* a : {&d.mig, &d.ecc, &d.retiredPages}) *a = {"nvmlDeviceGetHandleByIndex_v2", code, {}};
  for (auto* a : {&d.volatileCorrected, &d.volatileUncorrected, &d.aggregateCorrected, &d.aggregateUncorrected,
                  &d.clocksEventReasons})
    *a = {"nvmlDeviceGetHandleByIndex_v2", code, 0};
  d.remapped = {"nvmlDeviceGetHandleByIndex_v2", code, {}};
}

template <typename T, typename Make>
Napi::Value field(Napi::Env env, const Answer<T>& a, Make make) {
  Napi::Object out = Napi::Object::New(env);
  if (a.code == NVML_SUCCESS) {
    out.Set("ok", true);
    out.Set("value", make(a.value));
    return out;
  }
  out.Set("ok", false);
  out.Set("code", a.code);
  std::string message;
  if (a.code == kSymbolMissing) {
    message = std::string("this driver's NVML has no ") + a.api;
  } else {
    const char* text = nvml.nvmlErrorString ? nvml.nvmlErrorString(a.code) : nullptr;
    message = std::string(a.api) + ": " + (text ? text : "NVML error " + std::to_string(a.code));
  }
  out.Set("message", message);
  return out;
}

}  // namespace

Napi::Value NvmlHealth(const Napi::CallbackInfo& info) {
  auto health = std::make_shared<Health>();
  auto execute = [health](Failure& failure) {
    if (!ensureNvml(failure)) return;
    char version[96] = {0};
    ask(health->driverVersion, "nvmlSystemGetDriverVersion", nvml.nvmlSystemGetDriverVersion,
        [&](auto fn) { return fn(version, sizeof version); });
    health->driverVersion.value = version;
    ask(health->cudaDriverVersion, "nvmlSystemGetCudaDriverVersion_v2", nvmlHealthApi.nvmlSystemGetCudaDriverVersion,
        [&](auto fn) { return fn(&health->cudaDriverVersion.value); });
    unsigned count = 0;
    if (!checkNvml(failure, "nvmlDeviceGetCount_v2", nvml.nvmlDeviceGetCount(&count))) return;
    for (unsigned index = 0; index < count && index < 64; index++) {
      DeviceHealth d;
      d.index = index;
      nvmlDevice_t device = nullptr;
      nvmlReturn_t r = nvml.nvmlDeviceGetHandleByIndex(index, &device);
      if (r == NVML_SUCCESS)
        queryDevice(d, device);
      else
        failDevice(d, r);
      health->devices.push_back(std::move(d));
    }
  };
  auto resolve = [health](Napi::Env env) -> Napi::Value {
    auto str = [env](const std::string& s) { return Napi::String::New(env, s); };
    auto num = [env](double v) { return Napi::Number::New(env, v); };
    auto flag = [env](int v) { return Napi::Boolean::New(env, v != 0); };
    auto count = [env](unsigned long long v) { return Napi::Number::New(env, static_cast<double>(v)); };
    Napi::Object out = Napi::Object::New(env);
    out.Set("driverVersion", field(env, health->driverVersion, str));
    out.Set("cudaDriverVersion", field(env, health->cudaDriverVersion, num));
    Napi::Array devices = Napi::Array::New(env, health->devices.size());
    for (size_t i = 0; i < health->devices.size(); i++) {
      const DeviceHealth& d = health->devices[i];
      Napi::Object o = Napi::Object::New(env);
      o.Set("index", d.index);
      o.Set("name", field(env, d.name, str));
      o.Set("uuid", field(env, d.uuid, str));
      o.Set("pciBusId", field(env, d.pciBusId, str));
      o.Set("persistenceMode", field(env, d.persistence, flag));
      o.Set("displayActive", field(env, d.displayActive, flag));
      o.Set("computeMode", field(env, d.computeMode, num));
      o.Set("migMode", field(env, d.mig, [env](const Pair& p) {
              Napi::Object m = Napi::Object::New(env);
              m.Set("current", p.first);
              m.Set("pending", p.second);
              return m;
            }));
      o.Set("eccMode", field(env, d.ecc, [env](const Pair& p) {
              Napi::Object m = Napi::Object::New(env);
              m.Set("current", p.first != 0);
              m.Set("pending", p.second != 0);
              return m;
            }));
      Napi::Object ecc = Napi::Object::New(env);
      ecc.Set("volatileCorrected", field(env, d.volatileCorrected, count));
      ecc.Set("volatileUncorrected", field(env, d.volatileUncorrected, count));
      ecc.Set("aggregateCorrected", field(env, d.aggregateCorrected, count));
      ecc.Set("aggregateUncorrected", field(env, d.aggregateUncorrected, count));
      o.Set("eccErrors", ecc);
      o.Set("retiredPages", field(env, d.retiredPages, [env](const Pair& p) {
              Napi::Object m = Napi::Object::New(env);
              m.Set("multipleSingleBit", p.first);
              m.Set("doubleBit", p.second);
              return m;
            }));
      o.Set("retiredPagesPending", field(env, d.retiredPending, flag));
      o.Set("remappedRows", field(env, d.remapped, [env](const Rows& r) {
              Napi::Object m = Napi::Object::New(env);
              m.Set("correctable", r.correctable);
              m.Set("uncorrectable", r.uncorrectable);
              m.Set("pending", r.pending != 0);
              m.Set("failed", r.failed != 0);
              return m;
            }));
      o.Set("clocksEventReasons", field(env, d.clocksEventReasons, count));
      devices.Set(i, o);
    }
    out.Set("devices", devices);
    return out;
  };
  return PromiseWorker::Start(info.Env(), execute, resolve);
}
