// Scales n floats in place. The bounds check is off by one: `i <= n` lets thread n through, and it
// reads and writes x[n], one element past the end. No CUDA error: the write lands in mapped memory.
__global__ void scale(float* x, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) x[i] = x[i] * factor;
}
