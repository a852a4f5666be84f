"""A CuPy program whose RawKernel sums in shared memory without __syncthreads() between the load and the
tree: threads read their neighbours' slots before those are written. It often prints the right total on
one GPU and not on another — a race that only racecheck sees every time.

    gpu-workbench diagnose --thorough -- python3 reduce.py
"""
import cupy

SOURCE = r"""
extern "C" __global__ void block_sum(const float* in, float* out, int n) {
  __shared__ float slots[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  slots[threadIdx.x] = i < n ? in[i] : 0.0f;
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) slots[threadIdx.x] += slots[threadIdx.x + stride];
  }
  if (threadIdx.x == 0) out[blockIdx.x] = slots[0];
}
"""

block_sum = cupy.RawKernel(SOURCE, "block_sum", options=("-lineinfo",))
n = 1 << 16
x = cupy.ones(n, dtype=cupy.float32)
partial = cupy.zeros(n // 256, dtype=cupy.float32)
block_sum((n // 256,), (256,), (x, partial, cupy.int32(n)))
print("sum", float(partial.sum()), "expected", n)
