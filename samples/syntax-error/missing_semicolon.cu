// A missing semicolon: the compiler notices on the next line, so that is where it reports it.
__global__ void scale(float* data, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x
  if (i < n) data[i] *= factor;
}
