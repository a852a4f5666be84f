// Evaluates 96 coupled recurrences per thread. __launch_bounds__(1024) tells the compiler the block
// size, so it keeps to 64 registers per thread (spilling the rest to local memory) and 1024
// threads fit on an SM.
__global__ void __launch_bounds__(1024) recurrences(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc[96];
#pragma unroll
  for (int k = 0; k < 96; k++) acc[k] = i * (k + 1) * 0.5f;
#pragma unroll
  for (int step = 0; step < 8; step++)
#pragma unroll
    for (int k = 0; k < 96; k++) acc[k] = acc[k] * acc[(k + step + 1) % 96] * 1e-3f + 1.0f;
  float s = 0.0f;
#pragma unroll
  for (int k = 0; k < 96; k++) s += acc[k];
  if (i < n) out[i] = s;
}
