// The bare reference for `gpu-workbench profile`: the same kernel and launch from a plain runtime-API
// program, for bare `ncu` to profile and for CUDA events to time. Built on the GPU machine, one kernel each:
//   nvcc -O3 -lineinfo -DKERNEL_SOURCE='"samples/uncoalesced-access/broken.cu"' -DTRANSPOSE -o ref bench/raw/profile_ref.cu
//   nvcc -O3 -lineinfo -DKERNEL_SOURCE='"samples/vector-add/vector_add.cu"' -DVECADD -o ref bench/raw/profile_ref.cu
// Usage: ref <n or rows> <cols or 0> <gx> <gy> <bx> <by> <repeats>
//   -> one line of JSON: the kernel's median milliseconds (CUDA events) and the bytes its buffers hold
#include KERNEL_SOURCE

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(e_));           \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: ref <n|rows> <cols> <gx> <gy> <bx> <by> <repeats>\n");
    return 64;
  }
  const int a = std::atoi(argv[1]), b = std::atoi(argv[2]);
  const dim3 grid(std::atoi(argv[3]), std::atoi(argv[4])), block(std::atoi(argv[5]), std::atoi(argv[6]));
  const int repeats = std::atoi(argv[7]);
#ifdef TRANSPOSE
  const size_t count = size_t(a) * b;
  const int buffers = 2;
#else
  const size_t count = size_t(a);
  const int buffers = 3;
#endif
  std::vector<float*> d(buffers);
  for (auto& p : d) {
    CHECK(cudaMalloc(&p, count * sizeof(float)));
    CHECK(cudaMemset(p, 0, count * sizeof(float)));
  }
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int i = 0; i < repeats; ++i) {
    CHECK(cudaEventRecord(start));
#ifdef TRANSPOSE
    transpose<<<grid, block>>>(d[0], d[1], a, b);
#else
    vecAdd<<<grid, block>>>(d[0], d[1], d[2], a);
#endif
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  std::printf("{\"medianMs\":%.6f,\"bytes\":%zu}\n", ms[ms.size() / 2], count * sizeof(float) * buffers);
  for (auto p : d) CHECK(cudaFree(p));
  return 0;
}
