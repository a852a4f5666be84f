"""A Python ctypes program that allocates device memory with the CUDA runtime and exits without freeing it.

    compute-sanitizer --tool memcheck --leak-check full python leak.py
    gpu-workbench sanitize --tool memcheck -- python leak.py

memcheck's leak check reports the bytes still allocated at exit and where they were allocated.
"""
import ctypes
import glob
import os
import site


def load_cudart():
    roots = site.getsitepackages() + [site.getusersitepackages(), "/usr/local/cuda/lib64"]
    paths = sorted(p for r in roots for p in glob.glob(os.path.join(r, "**", "libcudart.so*"), recursive=True))
    if not paths:
        raise SystemExit("libcudart.so was not found (install the CUDA toolkit or the nvidia-cuda-runtime wheel)")
    return ctypes.CDLL(paths[-1])


cudart = load_cudart()
pointer = ctypes.c_void_p()
err = cudart.cudaMalloc(ctypes.byref(pointer), ctypes.c_size_t(1 << 20))  # 1 MiB, never freed
if err != 0:
    raise SystemExit(f"cudaMalloc failed with error {err}")
cudart.cudaDeviceSynchronize()
print(f"allocated 1 MiB at {pointer.value:#x}; exiting without cudaFree")
