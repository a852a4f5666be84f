// listDevices(attributeIds) -> Promise<Device[]>: every device with its name, UUID, PCI bus id, total
// memory and the value of each requested CUdevice_attribute (null where this driver lacks it).
// No context is created (ARCHITECTURE.md §1): the host may call this.
#include <napi.h>

#include <cstdio>

#include "args.h"
#include "async.h"
#include "loader.h"

namespace {

struct DeviceRecord {
  int ordinal = 0;
  std::string name, uuid, pciBusId;
  size_t totalMem = 0;
  std::vector<std::pair<int, int>> attributes;  // (value, CUresult)
};

std::string formatUuid(const CUuuid& uuid) {
  char text[48];
  const unsigned char* b = uuid.bytes;
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

}  // namespace

bool requireDriver(Failure& failure, const char* api) {
  if (libraryState(Library::Driver).loaded) return true;
  failure.failed = true;
  failure.library = "cuda";
  failure.api = api;
  failure.code = -1;
  failure.name = "WORKBENCH_DRIVER_NOT_LOADED";
  failure.message = "The CUDA driver (libcuda.so.1) is not loaded: run discovery first, or install the NVIDIA driver";
  return false;
}

Napi::Value ListDevices(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::vector<int> attributeIds;
  if (info.Length() > 0 && !info[0].IsUndefined()) {
    if (!info[0].IsArray()) throw Napi::TypeError::New(env, "attributeIds must be an array of numbers");
    Napi::Array ids = info[0].As<Napi::Array>();
    for (uint32_t i = 0; i < ids.Length(); i++)
      attributeIds.push_back(static_cast<int>(args::number(env, ids.Get(i), "attributeIds[]", 0, 100000)));
  }
  auto devices = std::make_shared<std::vector<DeviceRecord>>();

  auto execute = [devices, attributeIds](Failure& failure) {
    if (!requireDriver(failure, "cuInit")) return;
    if (!checkDriver(failure, "cuInit", cu.cuInit(0))) return;
    int count = 0;
    if (!checkDriver(failure, "cuDeviceGetCount", cu.cuDeviceGetCount(&count))) return;
    for (int ordinal = 0; ordinal < count; ordinal++) {
      DeviceRecord record;
      record.ordinal = ordinal;
      CUdevice device = 0;
      if (!checkDriver(failure, "cuDeviceGet", cu.cuDeviceGet(&device, ordinal))) return;
      char name[256] = {0};
      if (!checkDriver(failure, "cuDeviceGetName", cu.cuDeviceGetName(name, sizeof name - 1, device))) return;
      record.name = name;
      CUuuid uuid{};
      if (!checkDriver(failure, "cuDeviceGetUuid_v2", cu.cuDeviceGetUuid(&uuid, device))) return;
      record.uuid = formatUuid(uuid);
      char bus[64] = {0};
      if (!checkDriver(failure, "cuDeviceGetPCIBusId", cu.cuDeviceGetPCIBusId(bus, sizeof bus - 1, device))) return;
      record.pciBusId = bus;
      if (!checkDriver(failure, "cuDeviceTotalMem_v2", cu.cuDeviceTotalMem(&record.totalMem, device))) return;
      for (int id : attributeIds) {
        int value = 0;
        CUresult result = cu.cuDeviceGetAttribute(&value, id, device);
        record.attributes.push_back({value, result});
      }
      devices->push_back(record);
    }
  };

  auto resolve = [devices, attributeIds](Napi::Env env) -> Napi::Value {
    Napi::Array out = Napi::Array::New(env, devices->size());
    for (size_t i = 0; i < devices->size(); i++) {
      const DeviceRecord& d = (*devices)[i];
      Napi::Object o = Napi::Object::New(env);
      o.Set("ordinal", d.ordinal);
      o.Set("name", d.name);
      o.Set("uuid", d.uuid);
      o.Set("pciBusId", d.pciBusId);
      o.Set("totalMemBytes", Napi::Number::New(env, static_cast<double>(d.totalMem)));
      Napi::Object attrs = Napi::Object::New(env);
      for (size_t k = 0; k < attributeIds.size(); k++) {
        const auto& [value, result] = d.attributes[k];
        attrs.Set(std::to_string(attributeIds[k]),
                  result == CUDA_SUCCESS ? Napi::Value(Napi::Number::New(env, value)) : env.Null());
      }
      o.Set("attributes", attrs);
      out.Set(i, o);
    }
    return out;
  };
  return PromiseWorker::Start(env, execute, resolve);
}
