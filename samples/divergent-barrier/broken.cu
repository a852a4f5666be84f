// Sums each block of 256 floats by halving. The block first copies its slice into shared memory in strides
// of one warp's width, waiting at a barrier after every copy: thread t copies elements t, t + 32, … and so
// passes the barrier 8 times in warp 0, 7 times in warp 1, … once in warp 7. The later warps leave the loop
// and wait at the halving's barriers while the first are still copying: the barriers no longer pair up.
__global__ void blockSums(const float* in, float* out, int n) {
  __shared__ float partial[256];
  int t = threadIdx.x;
  int first = blockIdx.x * blockDim.x;
  int count = min((int)blockDim.x, n - first);
  for (int k = t; k < count; k += 32) {
    partial[k] = in[first + k];
    __syncthreads();
  }
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}
