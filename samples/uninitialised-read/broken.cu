// Adds 2*in[i] into out[i] — but nothing ever initialised out, so the sum starts from whatever the
// allocation held. Often zeros in a fresh process, which hides the bug until it does not.
__global__ void accumulate(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] += 2.0f * in[i];
}
