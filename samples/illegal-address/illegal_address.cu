// Writes far outside the buffer: the classic CUDA_ERROR_ILLEGAL_ADDRESS (700), a sticky error.
__global__ void writeFarOutOfBounds(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i + (1 << 28)] = 1.0f;  // 1 GiB past the start of a small buffer
}
