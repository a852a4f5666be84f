// c[i] = a[i] + b[i]. The kernel is fine; the broken plan never frees what it allocated.
__global__ void vecAdd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
