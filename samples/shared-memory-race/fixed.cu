// Reverses each block of 1024 floats through shared memory; every write to the tile is finished, in
// every warp, before any thread reads it.
__global__ void reverseBlocks(const float* in, float* out, int n) {
  __shared__ float tile[1024];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  if (i < n) tile[t] = in[i];
  __syncthreads();
  if (i < n) out[i] = tile[blockDim.x - 1 - t];
}
