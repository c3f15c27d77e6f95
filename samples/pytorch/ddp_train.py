#!/usr/bin/env python3
"""Data-parallel training with DistributedDataParallel (NCCL backend), as PyTorch users write it: the
MLP of mlp_train.py wrapped in DDP, one process per rank, launched by torchrun:

    python -m torch.distributed.run --nproc-per-node 2 ddp_train.py [options]

Each rank uses device LOCAL_RANK (modulo the devices it sees: on the simulated GPU,
TBDSIM_DEVICE_COUNT=2 gives each process two). DDP broadcasts rank 0's parameters at construction and
all-reduces the gradients in buckets (--bucket-cap-mb) during backward; --grad-as-bucket-view makes
param.grad views of the buckets. Options: train_common.parse_options and mlp_train's; label paths
may hold {rank}.

Before training the script checks that the collectives move data (the simulated kernels compute
nothing, but NCCL's collectives copy and reduce): an all-reduce of host-made values, and each rank's
parameters made from its own seed, which DDP's broadcast replaces by rank 0's. It prints a checksum
of the parameters read back to the host, equal on every rank when the broadcast moved them.
With --buckets-out PATH it writes, per rank, the device address and bytes of every parameter's .grad
after the last step, one `grad<TAB>0x...<TAB>bytes` line each.
"""
import hashlib
import os
import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

import mlp_train
import train_common


def extra_options(parser):
    mlp_train.extra_options(parser)
    parser.add_argument("--bucket-cap-mb", type=float, default=1.0, help="DDP's bucket size (default 1 MB)")
    parser.add_argument("--grad-as-bucket-view", action="store_true",
                        help="DDP's gradient_as_bucket_view: param.grad are views of the buckets")
    parser.add_argument("--buckets-out", metavar="PATH", help="write each .grad's address and bytes here")
    parser.add_argument("--list-nvidia-libraries", action="store_true",
                        help="print every mapped library named like one of NVIDIA's ('rank R mapped PATH')")


def rank_environment():
    """RANK, LOCAL_RANK and WORLD_SIZE as torchrun sets them; exit 2 with a message without them."""
    try:
        return int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"]), int(os.environ["WORLD_SIZE"])
    except (KeyError, ValueError):
        print("ddp_train: RANK, LOCAL_RANK and WORLD_SIZE are not set: launch with "
              "python -m torch.distributed.run --nproc-per-node N ddp_train.py", file=sys.stderr)
        sys.exit(2)


def say_line(text):
    """Prints one line with one write(2). The ranks share the launcher's stdout, and a line written in two
    pieces (text, then newline) can be split by another rank's line; a pipe keeps a write of at most
    PIPE_BUF bytes whole."""
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), (text + "\n").encode())


def check_all_reduce(rank, world, device):
    """Host-made values summed over the ranks: each rank contributes rank + 1."""
    values = torch.tensor([float(rank + 1)] * 8).to(device)
    dist.all_reduce(values)
    got = values.cpu().tolist()
    want = float(world * (world + 1) // 2)
    # The values go with the verdict either way: a failing check must show what it compared.
    say_line(f"rank {rank}: all_reduce {'ok' if got == [want] * 8 else 'WRONG'}: got {got}, want {want} x 8 "
             f"(sent {float(rank + 1)} from rank {rank} of {world})")


def parameter_checksum(model):
    digest = hashlib.sha1()
    for p in model.parameters():
        digest.update(p.detach().cpu().numpy().tobytes())
    return digest.hexdigest()[:16]


NVIDIA_PREFIXES = ("libcuda.", "libcudart", "libcublas", "libcudnn", "libcupti", "libcurand", "libcufft", "libcusparse",
                   "libcusolver", "libcufile", "libnvrtc", "libnvJitLink", "libnccl", "libnvshmem", "libnvidia-ml")


def list_nvidia_libraries(rank):
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if len(line.split()) >= 6}
    for path in sorted(paths):
        if path.rsplit("/", 1)[-1].startswith(NVIDIA_PREFIXES):
            say_line(f"rank {rank} mapped {path}")


def main():
    rank, local_rank, world = rank_environment()
    args = train_common.parse_options("ddp_train", __doc__, {"batch": 64, "optimizer": "sgd"}, extra_options)
    for option in ("oracle_labels", "script_labels", "profiler_trace", "buckets_out"):
        if getattr(args, option):
            setattr(args, option, getattr(args, option).replace("{rank}", str(rank)))
    if args.device == "cpu":
        print("ddp_train: the NCCL backend needs CUDA devices", file=sys.stderr)
        sys.exit(2)
    device = torch.device("cuda", local_rank % torch.cuda.device_count())
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    check_all_reduce(rank, world, device)
    models = []

    def build_model(a):
        torch.manual_seed(1000 + rank)  # rank-dependent: DDP's broadcast makes every rank rank 0's
        model = DistributedDataParallel(mlp_train.MLP(a).to(device), device_ids=[device],
                                        bucket_cap_mb=a.bucket_cap_mb,
                                        gradient_as_bucket_view=a.grad_as_bucket_view)
        say_line(f"rank {rank}: parameters after DDP's broadcast {parameter_checksum(model)}")
        parameter_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
        say_line(f"rank {rank}: parameter bytes {parameter_bytes}")
        models.append(model)
        return model

    train_common.train(f"ddp_train rank {rank}", args, build_model, mlp_train.make_batch,
                       nn.functional.cross_entropy)
    if args.buckets_out:
        with open(args.buckets_out, "w") as out:
            for p in models[0].parameters():
                out.write(f"grad\t{p.grad.data_ptr():#x}\t{p.grad.numel() * p.grad.element_size()}\n")
    if args.list_nvidia_libraries:
        list_nvidia_libraries(rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
