// The reference for the race sample: the same reversal straight from global memory, no shared memory.
__global__ void reverseBlocksReference(const float* in, float* out, int n) {
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  int from = blockIdx.x * blockDim.x + (blockDim.x - 1 - t);
  if (i < n) out[i] = in[from];
}
