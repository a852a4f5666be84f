// Squares n floats. The grid is rounded up to whole blocks (4 x 256 = 1024 threads for n = 1000) and
// nothing stops threads 1000..1023: they read past `in` and write past `out`.
__global__ void square(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i] * in[i];
}
