# A small PyTorch training loop for the real-GPU check: an MLP with SGD+momentum, NVTX step ranges
# (ignored unless a tool is attached), a fixed number of steps. Prints one line per 10 steps.
import sys
import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
torch.manual_seed(0)
device = torch.device("cuda")
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 2048), torch.nn.ReLU(),
    torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
    torch.nn.Linear(2048, 10)).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
for step in range(steps):
    torch.cuda.nvtx.range_push("step")
    x = torch.randn(256, 1024, device=device)
    y = torch.randint(0, 10, (256,), device=device)
    optimizer.zero_grad(set_to_none=False)
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    torch.cuda.nvtx.range_pop()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
torch.cuda.synchronize()
print("done", flush=True)
