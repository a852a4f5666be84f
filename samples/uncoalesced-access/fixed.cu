// Transposes a rows x cols matrix of floats through a 32 x 32 tile in shared memory: a warp reads a row of
// the tile from `in` and writes a row of the transposed tile to `out`, so both sides are whole 128-byte
// lines. The tile's extra column keeps the column reads in shared memory free of bank conflicts.
#define TILE 32

__global__ void transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  int c = blockIdx.x * TILE + threadIdx.x;
  int r = blockIdx.y * TILE + threadIdx.y;
  for (int k = 0; k < TILE; k += blockDim.y)
    if (r + k < rows && c < cols) tile[threadIdx.y + k][threadIdx.x] = in[(r + k) * cols + c];
  __syncthreads();
  c = blockIdx.y * TILE + threadIdx.x;
  r = blockIdx.x * TILE + threadIdx.y;
  for (int k = 0; k < TILE; k += blockDim.y)
    if (r + k < cols && c < rows) out[(r + k) * rows + c] = tile[threadIdx.x][threadIdx.y + k];
}
