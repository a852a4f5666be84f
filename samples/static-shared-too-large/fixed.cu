// Sums n floats in one block, a tile of 8192 floats (32 KiB of shared memory) at a time.
#define TILE 8192

__global__ void blockSum(const float* in, float* out, int n) {
  __shared__ float cache[TILE];
  int t = threadIdx.x;
  float s = 0.0f;
  for (int base = 0; base < n; base += TILE) {
    for (int k = t; k < TILE; k += blockDim.x) cache[k] = base + k < n ? in[base + k] : 0.0f;
    __syncthreads();
    if (t == 0)
      for (int k = 0; k < TILE; k++) s += cache[k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s;
}
