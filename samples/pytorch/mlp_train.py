#!/usr/bin/env python3
"""MLP classifier, PyTorch style: nn.Sequential of Linear + ReLU, cross-entropy, SGD with momentum
(or Adam, AdamW). Options: train_common.parse_options; `--hidden`, `--layers`."""
import torch
from torch import nn

import train_common


class MLP(nn.Module):
    def __init__(self, args):
        super().__init__()
        widths = [args.features] + [args.hidden] * args.layers
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(a, b), nn.ReLU()) for a, b in zip(widths, widths[1:]))
        self.head = nn.Linear(widths[-1], args.classes)
        self.args = args

    def forward(self, x):
        for block in self.blocks:
            x = train_common.maybe_checkpoint(self.args, block, x)
        return self.head(x)


def extra_options(parser):
    parser.add_argument("--features", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--classes", type=int, default=10)


def make_batch(args, generator):
    return (torch.randn(args.batch, args.features, generator=generator),
            torch.randint(0, args.classes, (args.batch,), generator=generator))


def main():
    args = train_common.parse_options("mlp_train", __doc__, {"batch": 64, "optimizer": "sgd"}, extra_options)
    train_common.train("mlp_train", args, MLP, make_batch, nn.functional.cross_entropy)


if __name__ == "__main__":
    main()
