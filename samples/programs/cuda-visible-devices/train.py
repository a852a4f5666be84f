"""A PyTorch program started with CUDA_VISIBLE_DEVICES naming a GPU that does not exist here (left over
from a job script written for an 8-GPU node): CUDA sees no device at all.

    CUDA_VISIBLE_DEVICES=7 gpu-workbench diagnose -- python3 train.py

Not a fault: the diagnosis names the setting, what it hides, and the fix.
"""
import torch

print("CUDA available:", torch.cuda.is_available())
weights = torch.zeros(1024, 1024, device="cuda")
print(weights.sum().item())
