"""A small transformer encoder block trained for a few steps with AdamW and gradient clipping:
attention through F.scaled_dot_product_attention (whichever backend PyTorch prefers: on the simulated
sm90 device, cuDNN's fused attention for the BF16 steps),
layer norm, GELU MLP; the second half of the steps under bf16 autocast. The simulated GPU computes no
values, so nothing here branches on a tensor's contents."""
import sys

import torch
import torch.nn.functional as F

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 2
DIM, HEADS, SEQ, BATCH = 128, 4, 64, 4


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(DIM)
        self.qkv = torch.nn.Linear(DIM, 3 * DIM)
        self.proj = torch.nn.Linear(DIM, DIM)
        self.norm2 = torch.nn.LayerNorm(DIM)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(DIM, 4 * DIM), torch.nn.GELU(), torch.nn.Linear(4 * DIM, DIM))

    def forward(self, x):
        q, k, v = self.qkv(self.norm1(x)).view(BATCH, SEQ, 3, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attended.transpose(1, 2).reshape(BATCH, SEQ, DIM))
        return x + self.mlp(self.norm2(x))

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Embedding(1000, DIM), Block(), torch.nn.Linear(DIM, 1000)).cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(STEPS):
    tokens = torch.randint(0, 1000, (BATCH, SEQ), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=step >= STEPS // 2):
        logits = model(tokens)
        loss = F.cross_entropy(logits.view(-1, 1000).float(), tokens.view(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
torch.cuda.synchronize()
print(f"transformer: {STEPS} steps done")
