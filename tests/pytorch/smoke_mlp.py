"""A small MLP trained for a few steps on the GPU, with SGD-momentum then Adam: linear layers go
through cuBLAS/cuBLASLt, the optimizers through PyTorch's own (foreach/fused) kernels. The simulated
GPU computes no values, so nothing here branches on a tensor's contents."""
import sys

import torch

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 3


def train(optimizer_name):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
    if optimizer_name == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    for _ in range(STEPS):
        inputs = torch.randn(64, 256, device="cuda")
        labels = torch.randint(0, 10, (64,), device="cuda")
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), labels)
        loss.backward()
        optimizer.step()
    torch.cuda.synchronize()
    print(f"mlp {optimizer_name}: {STEPS} steps done")


train("sgd")
train("adam")
print("peak allocated bytes", torch.cuda.max_memory_allocated())
