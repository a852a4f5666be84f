// Writes far outside its buffer through a stray index: a sticky fault. Where the stray address lands
// decides the code: unmapped global memory gives CUDA_ERROR_ILLEGAL_ADDRESS (700); an address inside the
// shared or local window gives CUDA_ERROR_INVALID_ADDRESS_SPACE (717). 64 MiB past a small allocation is
// unmapped global memory in a fresh context.
__global__ void writeFarOutOfBounds(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i + (1 << 24)] = 1.0f;
}
