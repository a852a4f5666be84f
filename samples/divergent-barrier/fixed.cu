// Sums each block of 256 floats by halving. Each thread copies one element, and every thread of the block
// reaches every barrier: no __syncthreads() sits in a loop or branch that only some threads run.
__global__ void blockSums(const float* in, float* out, int n) {
  __shared__ float partial[256];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}
