// Finds and dlopens the CUDA driver, NVRTC and NVML, and resolves every symbol of symbols.h.
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "symbols.h"

struct LoadAttempt {
  std::string candidate;  // a path, or a bare soname left to the dynamic loader
  std::string source;     // why it was tried: "setting", "CUDA_PATH", "loader path", ...
  std::string error;      // dlerror() text; empty when this attempt loaded
};

struct LibraryState {
  bool loaded = false;
  std::string path;    // the file the loader actually mapped
  std::string source;  // the candidate source that won
  std::vector<LoadAttempt> attempts;
  std::vector<std::string> missingRequired;
  std::vector<std::string> missingOptional;
  void* handle = nullptr;
};

#define DECLARE_POINTER(required, name, symbol, ret, params) ret(*name) params = nullptr;
struct DriverApi {
  CUDA_DRIVER_SYMBOLS(DECLARE_POINTER)
};
struct NvrtcApi {
  NVRTC_SYMBOLS(DECLARE_POINTER)
};
struct NvmlApi {
  NVML_SYMBOLS(DECLARE_POINTER)
};
// The doctor's optional health queries: their own struct, resolved from the same library as NvmlApi.
struct NvmlHealthApi {
  NVML_HEALTH_SYMBOLS(DECLARE_POINTER)
};
#undef DECLARE_POINTER

extern DriverApi cu;
extern NvrtcApi nvrtc;
extern NvmlApi nvml;
extern NvmlHealthApi nvmlHealthApi;

enum class Library { Driver, Nvrtc, Nvml };

struct Candidate {
  std::string path;
  std::string source;
};

// Tries candidates in order until one loads with every required symbol. Once a library is loaded it
// stays loaded for the life of the process; later calls return the same state.
const LibraryState& loadLibrary(Library which, const std::vector<Candidate>& candidates);
const LibraryState& libraryState(Library which);
