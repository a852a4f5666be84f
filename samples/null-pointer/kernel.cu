// Writes 1.0 to out[0..n). The kernel is fine; the broken plan passes it a null pointer — the host
// program that declared `float* d_out;` and never called cudaMalloc. Address 0 is never mapped, so
// this always faults: CUDA_ERROR_ILLEGAL_ADDRESS (700), a sticky error.
// (A write merely far past a buffer is no such guarantee: on an H200, 64 MiB past a 128-byte buffer
// landed in mapped memory and "succeeded" silently.)
//   gpu-workbench run samples/null-pointer/kernel.cu --kernel writeThrough --block 32 \
//     --arg out:u64=0 --arg n:i32=32
__global__ void writeThrough(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f;
}
