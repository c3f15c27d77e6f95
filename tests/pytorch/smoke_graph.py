"""A small MLP captured into a CUDA graph (torch.cuda.graph) and replayed: with the cudaMallocAsync
backend, the forward's allocations during capture become graph memory nodes, and each replay
allocates and frees them. Prints the replays and the memory counters; the simulated GPU computes no
values, so nothing here branches on a tensor's contents."""
import sys

import torch

REPLAYS = int(sys.argv[1]) if len(sys.argv) > 1 else 5

m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).cuda()
x = torch.randn(32, 64, device="cuda")
# Warm up on a side stream, as torch.cuda.graph's documentation asks.
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        y = m(x)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    y = m(x)
for _ in range(REPLAYS):
    x.copy_(torch.randn(32, 64, device="cuda"))
    g.replay()
torch.cuda.synchronize()
print("backend", torch.cuda.get_allocator_backend())
print("output", tuple(y.shape), float(y.sum()))
print("memory", torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated())
print(f"graph: {REPLAYS} replays, steps done")
