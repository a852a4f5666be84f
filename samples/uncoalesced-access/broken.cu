// Transposes a rows x cols matrix of floats. A warp's 32 threads read 32 neighbours of one row (one
// 128-byte line: 4 sectors) but write them down a column, `rows` floats apart: every thread stores into a
// sector of its own, 32 sectors for one request where 4 would do.
__global__ void transpose(const float* in, float* out, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];
}
