"""A small CNN (convolutions, batch norm, pooling) trained for a few steps: convolutions and batch
norm go through cuDNN (its v8+ graph API, from the cudnn frontend inside libtorch). The simulated
GPU computes no values, so nothing here branches on a tensor's contents."""
import sys

import torch

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 2

torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
for _ in range(STEPS):
    images = torch.randn(8, 3, 32, 32, device="cuda")
    labels = torch.randint(0, 10, (8,), device="cuda")
    optimizer.zero_grad(set_to_none=True)
    loss_fn(model(images), labels).backward()
    optimizer.step()
torch.cuda.synchronize()
print(f"cnn: {STEPS} steps done")
