"""A PyTorch program that leaks GPU memory the way training scripts do: it keeps a reference to every
step's tensor (a list that only grows, like losses kept without .item()), so nothing is ever freed.

    gpu-workbench monitor -- python3 leak.py
    gpu-workbench monitor --json --interval 50 -- python3 leak.py --steps 30 --mib 16

The monitor shows this process's memory growing steadily by about steps x MiB. The program first starts
CUDA and waits a second, so the monitor sees its memory before the leak begins; at the end it prints, as
one JSON line, how many bytes it appended.
"""
import argparse
import json
import time

import torch

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--steps", type=int, default=30, help="tensors to append (default 30)")
parser.add_argument("--mib", type=int, default=16, help="size of each, MiB (default 16)")
parser.add_argument("--every", type=float, default=0.1, help="seconds between appends (default 0.1)")
parser.add_argument("--settle", type=float, default=1.0, help="seconds to wait after starting CUDA (default 1)")
args = parser.parse_args()

torch.zeros(1, device="cuda")  # the context, before the leak
torch.cuda.synchronize()
time.sleep(args.settle)

kept = []
for step in range(args.steps):
    kept.append(torch.ones(args.mib * 2**20, dtype=torch.uint8, device="cuda"))  # never released
    torch.cuda.synchronize()
    time.sleep(args.every)

print(json.dumps({"appended_bytes": sum(t.numel() * t.element_size() for t in kept), "steps": args.steps}), flush=True)
