// The raw-CUDA reference for `npm run bench`: what a hand-written driver-API host program pays for the
// same work the workbench does — context, module load, alloc, upload, launch, sync, read back, free.
// Built on the GPU machine by the bench itself: nvcc -O2 -o launch_ref launch_ref.cu -lcuda -lnvrtc
// Usage: launch_ref <cubin> <symbol> <n> <repeats>   -> one line of JSON on stdout
//        launch_ref stdin <cubin> <symbol> <source.cu> <kernel> <n> [nvrtc option...]
//          per line on stdin: "run" (the cubin's kernel again), "edit" (NVRTC compile of a source with a
//          code edit, module load, alloc, upload, launch, read back, free) or "comment" (the same with a
//          comment edit); answers its milliseconds
#include <cuda.h>
#include <nvrtc.h>

#include <string>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                   \
  do {                                                                \
    CUresult r_ = (call);                                             \
    if (r_ != CUDA_SUCCESS) {                                         \
      const char* name_ = "?";                                        \
      cuGetErrorName(r_, &name_);                                     \
      std::fprintf(stderr, "%s failed: %s\n", #call, name_);          \
      std::exit(1);                                                   \
    }                                                                 \
  } while (0)

using Clock = std::chrono::steady_clock;
static double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

#define NVRTC_CHECK(call)                                                   \
  do {                                                                      \
    nvrtcResult r_ = (call);                                                \
    if (r_ != NVRTC_SUCCESS) {                                              \
      std::fprintf(stderr, "%s failed: %s\n", #call, nvrtcGetErrorString(r_)); \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

static std::vector<char> readFile(const char* path) {
  std::FILE* file = std::fopen(path, "rb");
  if (!file) {
    std::fprintf(stderr, "cannot open %s\n", path);
    std::exit(2);
  }
  std::vector<char> bytes;
  char chunk[65536];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0) bytes.insert(bytes.end(), chunk, chunk + got);
  std::fclose(file);
  return bytes;
}

// Device 0's primary context, current on this thread: what cudaSetDevice(0) does in a runtime-API program.
static void openContext() {
  CHECK(cuInit(0));
  CUdevice device;
  CHECK(cuDeviceGet(&device, 0));
  CUcontext context;
  CHECK(cuDevicePrimaryCtxRetain(&context, device));
  CHECK(cuCtxSetCurrent(context));
}

// alloc, upload a and b, launch c = a + b, synchronise, read back, free — as the workbench's plan does.
static void runOnce(CUfunction function, int n) {
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; i++) {
    a[i] = float(i);
    b[i] = float(2 * i);
  }
  CUdeviceptr da, db, dc;
  CHECK(cuMemAlloc(&da, n * sizeof(float)));
  CHECK(cuMemAlloc(&db, n * sizeof(float)));
  CHECK(cuMemAlloc(&dc, n * sizeof(float)));
  CHECK(cuMemcpyHtoD(da, a.data(), n * sizeof(float)));
  CHECK(cuMemcpyHtoD(db, b.data(), n * sizeof(float)));
  int count = n;
  void* args[] = {&da, &db, &dc, &count};
  CHECK(cuLaunchKernel(function, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CHECK(cuCtxSynchronize());
  CHECK(cuMemcpyDtoH(c.data(), dc, n * sizeof(float)));
  CHECK(cuMemFree(da));
  CHECK(cuMemFree(db));
  CHECK(cuMemFree(dc));
  if (c[n - 1] != 3.0f * float(n - 1)) {
    std::fprintf(stderr, "wrong result\n");
    std::exit(3);
  }
}

// One edit, then compile, load, run, unload. A code edit appends a kernel with a name of its own, so
// NVRTC compiles for real; a comment edit leaves the compiled program as it was, and NVRTC (12.9 on)
// answers it from the driver's compute cache.
static void editOnce(const std::string& source, const char* kernel, int n, const std::vector<const char*>& options, bool codeEdit) {
  std::string nonce = std::to_string(Clock::now().time_since_epoch().count());
  std::string edited = codeEdit ? source + "\n__global__ void edit_" + nonce + "(int* p) { if (p) *p = 1; }\n"
                                : source + "\n// edit " + nonce + "\n";
  nvrtcProgram program;
  NVRTC_CHECK(nvrtcCreateProgram(&program, edited.c_str(), "kernel.cu", 0, nullptr, nullptr));
  NVRTC_CHECK(nvrtcAddNameExpression(program, kernel));
  NVRTC_CHECK(nvrtcCompileProgram(program, int(options.size()), options.data()));
  const char* lowered = nullptr;
  NVRTC_CHECK(nvrtcGetLoweredName(program, kernel, &lowered));
  std::string symbol = lowered;
  size_t size = 0;
  NVRTC_CHECK(nvrtcGetCUBINSize(program, &size));
  std::vector<char> cubin(size);
  NVRTC_CHECK(nvrtcGetCUBIN(program, cubin.data()));
  NVRTC_CHECK(nvrtcDestroyProgram(&program));
  CUmodule module;
  CHECK(cuModuleLoadData(&module, cubin.data()));
  CUfunction function;
  CHECK(cuModuleGetFunction(&function, module, symbol.c_str()));
  runOnce(function, n);
  CHECK(cuModuleUnload(module));
}

// Line-driven, so the bench can interleave it with the workbench one measurement at a time: the
// machine's speed drifts (2x within a minute, seen on the H200 hosts), and both sides must see the same.
// Each line on stdin, "run" or "edit", is done once; its time in milliseconds is the answer line.
static int stdinMode(int argc, char** argv) {
  std::vector<char> image = readFile(argv[2]);
  const char* symbol = argv[3];
  std::vector<char> text = readFile(argv[4]);
  std::string source(text.begin(), text.end());
  const char* kernel = argv[5];
  const int n = std::atoi(argv[6]);
  std::vector<const char*> options(argv + 7, argv + argc);
  openContext();
  CUmodule module;
  CHECK(cuModuleLoadData(&module, image.data()));
  CUfunction function;
  CHECK(cuModuleGetFunction(&function, module, symbol));
  for (int i = 0; i < 3; i++) {  // warm-ups, as the workbench side gets
    runOnce(function, n);
    editOnce(source, kernel, n, options, true);
  }
  std::printf("ready\n");
  std::fflush(stdout);
  char line[64];
  while (std::fgets(line, sizeof line, stdin)) {
    std::string request(line);
    auto s = Clock::now();
    if (request.rfind("edit", 0) == 0) editOnce(source, kernel, n, options, true);
    else if (request.rfind("comment", 0) == 0) editOnce(source, kernel, n, options, false);
    else runOnce(function, n);
    std::printf("%.4f\n", ms(s, Clock::now()));
    std::fflush(stdout);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 7 && std::string(argv[1]) == "stdin") return stdinMode(argc, argv);
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <cubin> <symbol> <n> <repeats>\n", argv[0]);
    return 64;
  }
  const int n = std::atoi(argv[3]);
  const int repeats = std::atoi(argv[4]);
  auto t0 = Clock::now();
  openContext();
  auto t1 = Clock::now();
  std::vector<char> image = readFile(argv[1]);
  CUmodule module;
  CHECK(cuModuleLoadData(&module, image.data()));
  CUfunction function;
  CHECK(cuModuleGetFunction(&function, module, argv[2]));
  auto t2 = Clock::now();

  auto once = [&]() { runOnce(function, n); };
  once();
  auto t3 = Clock::now();
  std::vector<double> warm;
  for (int i = 0; i < repeats; i++) {
    auto s = Clock::now();
    once();
    warm.push_back(ms(s, Clock::now()));
  }
  std::sort(warm.begin(), warm.end());
  double median = warm.empty() ? 0 : warm[warm.size() / 2];
  std::printf("{\"contextMs\":%.3f,\"moduleMs\":%.3f,\"firstRunMs\":%.3f,\"warmMedianMs\":%.4f}\n", ms(t0, t1), ms(t1, t2), ms(t2, t3), median);
  return 0;
}
