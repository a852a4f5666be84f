// Fills out[0..n) with 1.0, using assert() where a bounds check belongs: threads 1000..1023 of the
// rounded-up grid fail it. A failed device assert stops the kernel: CUDA_ERROR_ASSERT (710), sticky.
#ifndef __CUDACC_RTC__  // NVRTC defines assert() itself and ships no <cassert>
#include <cassert>
#endif

__global__ void fill(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(i < n);
  out[i] = 1.0f;
}
