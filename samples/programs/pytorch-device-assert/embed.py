"""A PyTorch program whose embedding lookup has one index past the table: the kernel's device-side assert
fires, but the error is reported later, at the next call that waits for the GPU (`loss.item()`), so the
traceback blames the wrong line.

    gpu-workbench diagnose -- python3 embed.py

The diagnosis re-runs it with CUDA_LAUNCH_BLOCKING=1, which names the embedding call.
"""
import torch

vocabulary = 1000
table = torch.nn.Embedding(vocabulary, 64).cuda()
tokens = torch.randint(0, vocabulary, (32, 128), device="cuda")
tokens[3, 17] = vocabulary  # one past the end: the classic off-by-one of a tokenizer's special token

out = table(tokens)
loss = out.sum()
print(loss.item())
