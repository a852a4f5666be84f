// Reverses each block of 1024 floats through shared memory. The __syncthreads() between the write
// and the read is missing, so a warp reads tile entries that other warps have not written yet.
__global__ void reverseBlocks(const float* in, float* out, int n) {
  __shared__ float tile[1024];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  if (i < n) tile[t] = in[i];
  if (i < n) out[i] = tile[blockDim.x - 1 - t];
}
