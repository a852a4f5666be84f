"""A PyTorch program that runs out of memory because another process holds the GPU: it starts a helper
(as a data loader or a forgotten server would) that takes most of the free memory, then asks for a third
of the card.

    gpu-workbench diagnose -- python3 hog.py

The helper is this program's own child, so the diagnosis names it as such, with its command line.
"""
import subprocess
import sys

import torch

HOLDER = """
import sys, time, torch
free, total = torch.cuda.mem_get_info()
held = torch.empty(int(free * 0.85), dtype=torch.uint8, device="cuda")
print("holding", held.numel(), flush=True)
time.sleep(120)
"""


def start_holder():
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, "cache-server"], stdout=subprocess.PIPE, text=True)
    print(holder.stdout.readline().strip(), flush=True)
    return holder


holder = start_holder()
try:
    _, total = torch.cuda.mem_get_info()
    batch = torch.empty(int(total * 0.3), dtype=torch.uint8, device="cuda")
    print(batch.numel())
finally:
    holder.kill()
