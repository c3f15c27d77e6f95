"""F.scaled_dot_product_attention through cuDNN's fused attention only (no fallback to PyTorch's own
kernels), forward and backward, for a few steps: even steps causal in BF16, odd steps unmasked with
dropout (p = 1/8: PyTorch gives cuDNN multiples of 1/16 only) in FP16. On the simulated GPU this
runs the SDPA graphs the simulated cuDNN executes through its backend API; values are not computed, so
nothing here branches on a tensor's contents."""
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 2
BATCH, HEADS, SEQ, HEAD_DIM = 2, 4, 128, 64

for step in range(STEPS):
    dtype = torch.bfloat16 if step % 2 == 0 else torch.float16
    q, k, v = (torch.randn(BATCH, HEADS, SEQ, HEAD_DIM, device="cuda", dtype=dtype, requires_grad=True)
               for _ in range(3))
    causal = step % 2 == 0
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, dropout_p=0.0 if causal else 0.125)
    out.sum().backward()
torch.cuda.synchronize()
print(f"sdpa: {STEPS} steps done")
