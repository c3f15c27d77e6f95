#!/usr/bin/env python3
"""Small CNN classifier on 32x32 RGB images: two Conv2d + BatchNorm2d + ReLU + MaxPool stages and a
Linear head, cross-entropy, SGD with momentum (or Adam, AdamW). Options: train_common.parse_options;
`--channels`, `--image`."""
import sys

import torch
from torch import nn

import train_common


class CNN(nn.Module):
    def __init__(self, args):
        super().__init__()
        c = args.channels

        def stage(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), nn.MaxPool2d(2))

        self.stages = nn.ModuleList([stage(3, c), stage(c, 2 * c)])
        self.head = nn.Linear(2 * c * (args.image // 4) ** 2, args.classes)
        self.args = args

    def forward(self, x):
        for s in self.stages:
            x = train_common.maybe_checkpoint(self.args, s, x)
        return self.head(torch.flatten(x, 1))


def extra_options(parser):
    parser.add_argument("--channels", type=int, default=16)
    parser.add_argument("--image", type=int, default=32, help="image side, a multiple of 4")
    parser.add_argument("--classes", type=int, default=10)


def make_batch(args, generator):
    return (torch.randn(args.batch, 3, args.image, args.image, generator=generator),
            torch.randint(0, args.classes, (args.batch,), generator=generator))


def main():
    args = train_common.parse_options("cnn_train", __doc__, {"batch": 32, "optimizer": "sgd"}, extra_options)
    if args.image < 4 or args.image % 4:
        print("cnn_train: --image must be a positive multiple of 4", file=sys.stderr)
        sys.exit(2)
    train_common.train("cnn_train", args, CNN, make_batch, nn.functional.cross_entropy)


if __name__ == "__main__":
    main()
