// Fills out[0..n) with 1.0; threads past the end of the data do nothing.
__global__ void fill(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f;
}
