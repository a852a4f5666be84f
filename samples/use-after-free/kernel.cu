// Scales n floats in place. The kernel is fine; the plan (the host code) frees its buffer too early.
__global__ void scale(float* x, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * factor;
}
