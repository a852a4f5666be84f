"""A PyTorch program that runs out of memory in one operation: torch.cat of two tensors that together hold
most of the GPU needs a third as large as both, and the GPU has no room for it.

    gpu-workbench diagnose -- python3 join.py

The tensors are sized from the GPU's own memory (each 40% of it), so it fails the same way on any card.
"""
import torch


def load_halves(total_bytes):
    first = torch.empty(int(total_bytes * 0.4), dtype=torch.uint8, device="cuda")
    second = torch.empty(int(total_bytes * 0.4), dtype=torch.uint8, device="cuda")
    return first, second


def main():
    _, total = torch.cuda.mem_get_info()
    first, second = load_halves(total)
    joined = torch.cat([first, second])  # needs 80% more while both inputs are alive
    print(joined.numel())


main()
