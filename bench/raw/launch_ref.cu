// The raw-CUDA reference for `npm run bench`: what a hand-written driver-API host program pays for the
// same work the workbench does — context, module load, alloc, upload, launch, sync, read back, free.
// Built on the GPU machine by the bench itself: nvcc -O2 -o launch_ref launch_ref.cu -lcuda
// Usage: launch_ref <cubin> <symbol> <n> <repeats>   -> one line of JSON on stdout
#include <cuda.h>

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

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <cubin> <symbol> <n> <repeats>\n", argv[0]);
    return 64;
  }
  const int n = std::atoi(argv[3]);
  const int repeats = std::atoi(argv[4]);
  auto t0 = Clock::now();
  CHECK(cuInit(0));
  CUdevice device;
  CHECK(cuDeviceGet(&device, 0));
  CUcontext context;
  CHECK(cuDevicePrimaryCtxRetain(&context, device));
  CHECK(cuCtxSetCurrent(context));
  auto t1 = Clock::now();
  std::FILE* file = std::fopen(argv[1], "rb");
  if (!file) return 2;
  std::vector<char> image;
  char chunk[65536];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0) image.insert(image.end(), chunk, chunk + got);
  std::fclose(file);
  CUmodule module;
  CHECK(cuModuleLoadData(&module, image.data()));
  CUfunction function;
  CHECK(cuModuleGetFunction(&function, module, argv[2]));
  auto t2 = Clock::now();

  std::vector<float> a(n), b(n), c(n);
  auto once = [&]() {
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
  };
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
