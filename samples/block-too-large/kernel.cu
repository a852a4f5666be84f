// Adds two matrices, one thread per element, in 2-D blocks. The kernel is fine; the broken plan
// launches it with 64 x 32 = 2048 threads per block, twice the limit of 1024.
__global__ void addMatrices(const float* a, const float* b, float* c, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) c[y * width + x] = a[y * width + x] + b[y * width + x];
}
