"""A CuPy program whose RawKernel writes one element past the end of its output: the classic off-by-one.

    compute-sanitizer --tool memcheck python oob.py
    gpu-workbench sanitize --tool memcheck -- python oob.py

Compiled with -lineinfo, so the sanitizer names the kernel's line; it also names this file's line that
launched it (the host backtrace goes through CuPy into this script).

CuPy's memory pool is turned off: the pool hands out pieces of larger allocations, so a write one element
past the end lands in memory the driver did give out, and memcheck cannot see it (recorded on an H100 with
the pool on: no error). PyTorch's caching allocator hides overruns the same way; PYTORCH_NO_CUDA_MEMORY_CACHING=1
turns it off.
"""
import cupy

cupy.cuda.set_allocator(None)

SOURCE = r"""
extern "C" __global__ void scale(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 2.0f * in[i];
}
"""

scale = cupy.RawKernel(SOURCE, "scale", options=("-lineinfo",))
n = 1000
x = cupy.arange(n, dtype=cupy.float32)
y = cupy.empty(n, dtype=cupy.float32)
scale(((n + 255) // 256,), (256,), (x, y, cupy.int32(n)))
cupy.cuda.Device().synchronize()
print(float(y.sum()))
