// Evaluates 96 coupled recurrences per thread, all kept in registers: well over 64 registers per
// thread. At 1024 threads per block that needs more than the SM's 65536 registers, so the launch
// fails with CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701).
__global__ void recurrences(float* out, int n) {
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
