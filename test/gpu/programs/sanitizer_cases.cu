// Classic bugs, one per argument, run under compute-sanitizer to record what it really prints.
//   nvcc -lineinfo -o sanitizer_cases sanitizer_cases.cu
//   compute-sanitizer --tool memcheck ./sanitizer_cases oob      (and race / uninit / null / sync / leak / clean)
// record_sanitizer.sh runs every case under every tool, as text and as XML.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

__global__ void offByOne(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 1.0f;  // <= instead of <: writes one past the end
}

__global__ void reduceWithoutSync(const float* in, float* out) {
  __shared__ float s[256];
  s[threadIdx.x] = in[threadIdx.x];
  // missing __syncthreads(): threads read neighbours' slots before they are written
  if (threadIdx.x < 128) s[threadIdx.x] += s[threadIdx.x + 128];
  if (threadIdx.x == 0) out[0] = s[0];
}

__global__ void readUninitialised(const float* in, float* out) { out[threadIdx.x] = in[threadIdx.x] * 2.0f; }

__global__ void writeThrough(float* out) { out[threadIdx.x] = 1.0f; }

__global__ void divergentBarrier(float* out) {
  __shared__ float s[64];
  s[threadIdx.x] = threadIdx.x;
  if (threadIdx.x % 2 == 0) __syncthreads();  // half of each warp reaches the barrier: synccheck reports it
  out[threadIdx.x] = s[(threadIdx.x + 1) % 64];
}

__global__ void badWarpMask(float* out) {
  // The mask names all 32 lanes, but only the first 16 call __syncwarp: synccheck reports it.
  if (threadIdx.x % 32 < 16) __syncwarp(0xffffffffu);
  out[threadIdx.x] = 1.0f;
}

int main(int argc, char** argv) {
  const char* which = argc > 1 ? argv[1] : "oob";
  float *a = nullptr, *b = nullptr;
  cudaMalloc(&a, 1000 * sizeof(float));
  cudaMalloc(&b, 1000 * sizeof(float));
  if (!std::strcmp(which, "oob")) offByOne<<<4, 256>>>(a, 1000);
  if (!std::strcmp(which, "race")) {
    cudaMemset(a, 0, 256 * sizeof(float));
    reduceWithoutSync<<<1, 256>>>(a, b);
  }
  if (!std::strcmp(which, "uninit")) readUninitialised<<<1, 32>>>(a, b);
  if (!std::strcmp(which, "null")) writeThrough<<<1, 32>>>(nullptr);
  if (!std::strcmp(which, "sync")) divergentBarrier<<<1, 64>>>(a);
  if (!std::strcmp(which, "syncwarp")) badWarpMask<<<1, 64>>>(a);
  if (!std::strcmp(which, "many")) writeThrough<<<64, 1024>>>(nullptr);  // 65,536 faulting threads
  if (!std::strcmp(which, "leak")) {
    float* lost = nullptr;
    cudaMalloc(&lost, 12345);  // never freed: memcheck --leak-check full names this line
    writeThrough<<<1, 32>>>(a);
  }
  if (!std::strcmp(which, "clean")) writeThrough<<<1, 32>>>(a);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("cudaDeviceSynchronize: %s (%s)\n", cudaGetErrorName(e), cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
