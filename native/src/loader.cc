#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "loader.h"

#include <dlfcn.h>
#include <link.h>

DriverApi cu;
NvrtcApi nvrtc;
NvmlApi nvml;
NvmlHealthApi nvmlHealthApi;

namespace {

std::mutex loaderMutex;
LibraryState states[3];

struct SymbolSlot {
  bool required;
  const char* symbol;
  void** slot;
};

std::vector<SymbolSlot> symbolSlots(Library which) {
  std::vector<SymbolSlot> slots;
  auto add = [&](bool required, const char* symbol, void** slot) { slots.push_back({required, symbol, slot}); };
#define ADD_DRIVER(required, name, symbol, ret, params) add(required, symbol, reinterpret_cast<void**>(&cu.name));
#define ADD_NVRTC(required, name, symbol, ret, params) add(required, symbol, reinterpret_cast<void**>(&nvrtc.name));
#define ADD_NVML(required, name, symbol, ret, params) add(required, symbol, reinterpret_cast<void**>(&nvml.name));
#define ADD_NVML_HEALTH(required, name, symbol, ret, params) \
  add(required, symbol, reinterpret_cast<void**>(&nvmlHealthApi.name));
  switch (which) {
    case Library::Driver: CUDA_DRIVER_SYMBOLS(ADD_DRIVER) break;
    case Library::Nvrtc: NVRTC_SYMBOLS(ADD_NVRTC) break;
    case Library::Nvml: NVML_SYMBOLS(ADD_NVML) NVML_HEALTH_SYMBOLS(ADD_NVML_HEALTH) break;
  }
#undef ADD_DRIVER
#undef ADD_NVRTC
#undef ADD_NVML
#undef ADD_NVML_HEALTH
  return slots;
}

std::string mappedPath(void* handle, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

}  // namespace

const LibraryState& libraryState(Library which) { return states[static_cast<int>(which)]; }

const LibraryState& loadLibrary(Library which, const std::vector<Candidate>& candidates) {
  std::lock_guard<std::mutex> lock(loaderMutex);
  LibraryState& state = states[static_cast<int>(which)];
  if (state.loaded) return state;
  state.attempts.clear();
  state.missingRequired.clear();
  state.missingOptional.clear();

  for (const auto& candidate : candidates) {
    dlerror();
    void* handle = dlopen(candidate.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* error = dlerror();
      state.attempts.push_back({candidate.path, candidate.source, error ? error : "dlopen failed"});
      continue;
    }
    auto slots = symbolSlots(which);
    std::vector<std::string> missingRequired, missingOptional;
    for (auto& slot : slots) {
      *slot.slot = dlsym(handle, slot.symbol);
      if (*slot.slot == nullptr) (slot.required ? missingRequired : missingOptional).push_back(slot.symbol);
    }
    if (!missingRequired.empty()) {
      for (auto& slot : slots) *slot.slot = nullptr;
      std::string error = "too old: lacks";
      for (const auto& name : missingRequired) error += " " + name;
      state.attempts.push_back({candidate.path, candidate.source, error});
      state.missingRequired = missingRequired;
      dlclose(handle);
      continue;
    }
    state.attempts.push_back({candidate.path, candidate.source, ""});
    state.loaded = true;
    state.handle = handle;
    state.path = mappedPath(handle, candidate.path);
    state.source = candidate.source;
    state.missingRequired.clear();
    state.missingOptional = missingOptional;
    break;
  }
  return state;
}
