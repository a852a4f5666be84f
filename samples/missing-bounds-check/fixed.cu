// Squares n floats; threads past the end of the data (the grid is rounded up) do nothing.
__global__ void square(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i];
}
