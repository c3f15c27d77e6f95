#!/usr/bin/env python3
"""Small transformer sequence classifier: token embedding, learned positions, nn.TransformerEncoder
(pre-norm, batch_first) or hand-written multi-head attention blocks (`--attention manual`), mean
pooling and a Linear head; AdamW with gradient clipping (--clip 1.0) by default. Options:
train_common.parse_options; `--d-model`, `--heads`, `--layers`, `--seq`, `--vocab`, `--attention`."""
import math

import torch
from torch import nn

import train_common


class ManualBlock(nn.Module):
    """Pre-norm block with attention written out: qkv projection, softmax(q k^T / sqrt(d)) v."""

    def __init__(self, d_model, heads):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv, self.proj = nn.Linear(d_model, 3 * d_model), nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // self.heads), dim=-1)
        x = x + self.proj((scores @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.norm2(x))


class Transformer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.embed = nn.Embedding(args.vocab, args.d_model)
        self.position = nn.Parameter(torch.zeros(args.seq, args.d_model))
        if args.attention == "manual":
            self.blocks = nn.ModuleList(ManualBlock(args.d_model, args.heads) for _ in range(args.layers))
        else:
            self.blocks = nn.ModuleList(
                nn.TransformerEncoderLayer(args.d_model, args.heads, 4 * args.d_model, dropout=0.0, batch_first=True,
                                           norm_first=True) for _ in range(args.layers))
        self.norm = nn.LayerNorm(args.d_model)
        self.head = nn.Linear(args.d_model, args.classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position
        for block in self.blocks:
            x = train_common.maybe_checkpoint(self.args, block, x)
        return self.head(self.norm(x).mean(dim=1))


def extra_options(parser):
    parser.add_argument("--d-model", type=int, default=64)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--vocab", type=int, default=512)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--attention", choices=["encoder", "manual"], default="encoder",
                        help="nn.TransformerEncoderLayer (default) or hand-written attention")


def make_batch(args, generator):
    return (torch.randint(0, args.vocab, (args.batch, args.seq), generator=generator),
            torch.randint(0, args.classes, (args.batch,), generator=generator))


def main():
    args = train_common.parse_options("transformer_train", __doc__, {"batch": 16, "optimizer": "adamw", "clip": 1.0},
                                      extra_options)
    train_common.train("transformer_train", args, Transformer, make_batch, nn.functional.cross_entropy)


if __name__ == "__main__":
    main()
