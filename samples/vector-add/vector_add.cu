// c[i] = a[i] + b[i] for i < n: the smallest real kernel, with its bounds check.
__global__ void vecAdd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
