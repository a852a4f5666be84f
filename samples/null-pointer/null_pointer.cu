// Writes through a pointer argument that is null — the classic uninitialised device pointer. Address 0
// is never mapped, so this always faults: CUDA_ERROR_ILLEGAL_ADDRESS (700), a sticky error.
// (A write merely far past a buffer is no such guarantee: on an H200, 64 MiB past a 128-byte buffer
// landed in mapped memory and "succeeded" silently. Only compute-sanitizer catches that reliably.)
//   gpu-workbench run samples/null-pointer/null_pointer.cu --kernel writeThrough --block 32 \
//     --arg out:u64=0 --arg n:i32=32
__global__ void writeThrough(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 1.0f;
}
