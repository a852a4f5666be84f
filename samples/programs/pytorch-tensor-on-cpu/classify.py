"""A PyTorch program that moves its model to the GPU but not its input: the first layer sees a CPU tensor
beside CUDA weights and PyTorch refuses.

    gpu-workbench diagnose -- python3 classify.py

Not a fault: nothing to re-run. The diagnosis names the line, the tensor and the fix.
"""
import torch

model = torch.nn.Sequential(torch.nn.Linear(256, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).cuda()
features = torch.randn(32, 256)  # made on the CPU: .to("cuda") was forgotten
logits = model(features)
print(logits.argmax(dim=1))
