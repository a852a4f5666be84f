"""A ctypes program that reads a device pointer on the host: cudaMalloc's address is GPU memory, and
ctypes.string_at dereferences it in the CPU's address space, so the process dies with SIGSEGV and Python
prints no traceback.

    gpu-workbench diagnose -- python3 peek.py

The diagnosis re-runs it with Python's fault handler (the line) and under memcheck (no device error: the
fault is the host's).
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
device = ctypes.c_void_p()
assert cudart.cudaMalloc(ctypes.byref(device), ctypes.c_size_t(4096)) == 0
cudart.cudaMemset(device, 0, ctypes.c_size_t(4096))
cudart.cudaDeviceSynchronize()
header = ctypes.string_at(device.value, 16)  # a device address read on the host
print(header)
