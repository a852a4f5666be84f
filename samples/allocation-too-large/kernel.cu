// Fills n floats with a value, in a grid-stride loop. The kernel is fine; the broken plan asks for
// 2^36 floats (256 GiB), more memory than any single GPU has.
__global__ void fill(float* x, float value, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
    x[i] = value;
}
