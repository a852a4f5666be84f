"""Makes the errors users paste happen for real, in PyTorch and CuPy, and records their exact text.

Run on the GPU machine: python3 python_errors.py OUT.jsonl. Each scenario runs in its own process (a sticky
error ends a process's context), and the line written for it holds the exception's text, the program's
stderr (PyTorch's device-side assert text goes there), and the versions that printed it.
"""
import json
import os
import subprocess
import sys
import textwrap
import time

SCENARIOS = {
    # PyTorch 2.x: a request larger than the whole GPU.
    "torch-oom-too-large": """
import torch
x = torch.empty(int(200 * 2**30), dtype=torch.uint8, device='cuda')
""",
    # PyTorch 2.x: the cache holds the space, split in blocks too small for the request (fragmentation).
    "torch-oom-fragmented": """
import torch
torch.cuda.set_per_process_memory_fraction(0.02)  # ~1.6-2.8 GiB: small enough to fill quickly
keep, drop = [], []
try:
    while True:
        # 6 MiB tensors share 20 MiB segments three at a time; freeing two of three leaves 12 MiB holes
        for i in range(3):
            t = torch.empty(6 * 2**20, dtype=torch.uint8, device='cuda')
            (keep if i == 0 else drop).append(t)
except torch.OutOfMemoryError:
    pass
drop.clear()
x = torch.empty(64 * 2**20, dtype=torch.uint8, device='cuda')
""",
    # PyTorch 2.x: another process holds most of the GPU; the message names it.
    "torch-oom-other-process": """
import subprocess, sys, time, torch
holder = subprocess.Popen([sys.executable, '-c', '''
import torch, time, sys
free, total = torch.cuda.mem_get_info()
x = torch.empty(int(free * 0.85), dtype=torch.uint8, device="cuda")
print("ready", flush=True)
time.sleep(60)
'''], stdout=subprocess.PIPE, text=True)
assert holder.stdout.readline().strip() == 'ready'
try:
    free, total = torch.cuda.mem_get_info()
    x = torch.empty(int(total * 0.3), dtype=torch.uint8, device='cuda')
finally:
    holder.kill()
""",
    # PyTorch 2.x: this process holds most of it in tensors, and asks for more.
    "torch-oom-own-tensors": """
import torch
free, total = torch.cuda.mem_get_info()
held = [torch.empty(int(free * 0.45), dtype=torch.uint8, device='cuda') for _ in range(2)]
x = torch.empty(int(total * 0.2), dtype=torch.uint8, device='cuda')
""",
    "cupy-oom": """
import cupy
x = cupy.empty(200 * 2**30, dtype=cupy.uint8)
""",
    "cupy-oom-after-pool": """
import cupy
free, total = cupy.cuda.runtime.memGetInfo()
held = cupy.empty(int(free * 0.7), dtype=cupy.uint8)
x = cupy.empty(int(total * 0.5), dtype=cupy.uint8)
""",
    # The runtime API's own name, as a ctypes program prints it.
    "ctypes-cudamalloc-oom": """
import ctypes, glob, os, sys
import site
roots = site.getsitepackages() + [site.getusersitepackages(), '/usr/local/cuda/lib64']
paths = [p for r in roots for p in glob.glob(os.path.join(r, '**', 'libcudart.so*'), recursive=True)]
cudart = ctypes.CDLL(sorted(paths)[-1])
cudart.cudaGetErrorName.restype = ctypes.c_char_p
cudart.cudaGetErrorString.restype = ctypes.c_char_p
p = ctypes.c_void_p()
err = cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(200 * 2**30))
name = cudart.cudaGetErrorName(err).decode()
msg = cudart.cudaGetErrorString(err).decode()
raise RuntimeError(f"cudaMalloc failed: {name} ({err}): {msg}")
""",
    "cupy-illegal-address": """
import cupy
k = cupy.RawKernel(r'''extern "C" __global__ void bad(float* p) { p[(size_t)1 << 40] = 1.0f; }''', 'bad')
x = cupy.zeros(16, dtype=cupy.float32)
k((1,), (32,), (x,))
cupy.cuda.Device().synchronize()
""",
    # PyTorch sees a fault that another library's kernel left in the shared primary context.
    "torch-illegal-address": """
import cupy, torch
a = torch.ones(1024, device='cuda')
k = cupy.RawKernel(r'''extern "C" __global__ void bad(float* p) { p[(size_t)1 << 40] = 1.0f; }''', 'bad')
x = cupy.zeros(16, dtype=cupy.float32)
k((1,), (32,), (x,))
b = a * 2
print(b.sum().item())
""",
    "torch-launch-failure": """
import cupy, torch
a = torch.ones(1024, device='cuda')
k = cupy.RawKernel(r'''extern "C" __global__ void t() { __trap(); }''', 't')
k((1,), (32,), ())
b = a * 2
print(b.sum().item())
""",
    "cupy-launch-failure": """
import cupy
k = cupy.RawKernel(r'''extern "C" __global__ void t() { __trap(); }''', 't')
k((1,), (32,), ())
cupy.cuda.Device().synchronize()
""",
    "torch-assert-embedding": """
import torch
table = torch.nn.Embedding(1000, 64).cuda()
idx = torch.tensor([3, 17, 1000], device='cuda')
out = table(idx)
print(out.sum().item())
""",
    "torch-assert-cross-entropy": """
import torch
logits = torch.randn(8, 10, device='cuda')
labels = torch.tensor([0, 1, 2, 3, 4, 5, 6, 10], device='cuda')
loss = torch.nn.functional.cross_entropy(logits, labels)
print(loss.item())
""",
    "torch-assert-gather": """
import torch
src = torch.randn(4, 5, device='cuda')
index = torch.tensor([[0, 1, 7]], device='cuda')
out = torch.gather(src, 1, index)
print(out.sum().item())
""",
    "torch-launch-blocking-assert": """
import os
os.environ['CUDA_LAUNCH_BLOCKING'] = '1'
import torch
table = torch.nn.Embedding(1000, 64).cuda()
idx = torch.tensor([3, 17, 1000], device='cuda')
out = table(idx)
print(out.sum().item())
""",
}


def versions():
    out = {"python": sys.version.split()[0]}
    try:
        import torch
        out["torch"] = torch.__version__
        out["torchCuda"] = torch.version.cuda
        out["gpu"] = torch.cuda.get_device_name(0)
    except Exception as e:  # noqa: BLE001
        out["torch"] = f"unavailable: {e}"
    try:
        import cupy
        out["cupy"] = cupy.__version__
    except Exception as e:  # noqa: BLE001
        out["cupy"] = f"unavailable: {e}"
    return out


def main():
    path = sys.argv[1]
    only = set(sys.argv[2:])
    v = versions()
    with open(path, "w") as f:
        for name, code in SCENARIOS.items():
            if only and name not in only:
                continue
            started = time.time()
            p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=180)
            stderr = p.stderr
            # The exception's own text: from its "XxxError: ..." line to the end.
            lines = stderr.rstrip().splitlines()
            start = next((i for i in range(len(lines) - 1, -1, -1) if lines[i] and not lines[i].startswith(" ") and ("Error" in lines[i].split(":")[0])), None)
            exception = "\n".join(lines[start:]) if start is not None else ""
            row = {"scenario": name, "exitCode": p.returncode, "exception": exception, "stderr": stderr[-20000:], "stdout": p.stdout[-4000:], "seconds": round(time.time() - started, 2), **v}
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"{name}: exit {p.returncode}; {exception.splitlines()[0] if exception else '(no exception)'}", flush=True)


main()
