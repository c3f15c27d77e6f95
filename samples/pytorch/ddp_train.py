#!/usr/bin/env python3
"""Data-parallel training with DistributedDataParallel (NCCL backend), as PyTorch users write it: the
MLP of mlp_train.py wrapped in DDP, one process per rank, launched by torchrun:

    python -m torch.distributed.run --nproc-per-node 2 ddp_train.py [options]

Each rank uses device LOCAL_RANK (modulo the devices it sees: on the simulated GPU,
TBDSIM_DEVICE_COUNT=2 gives each process two). DDP broadcasts rank 0's parameters at construction and
all-reduces the gradients in buckets (--bucket-cap-mb) during backward; --grad-as-bucket-view makes
param.grad views of the buckets. Options: train_common.parse_options and mlp_train's; label paths
may hold {rank}.

Sharded variants (issue 25, checking `tbdprof whatif --zero`): --zero-optimizer wraps the optimizer
(--optimizer adam or adamw, so that it has state) in ZeroRedundancyOptimizer, ZeRO stage 1 under DDP:
each rank keeps the state of its shard of the parameters (whole tensors, assigned largest first to
the rank with the fewest elements so far), steps that shard and broadcasts it to the other ranks.
--fsdp shard-grad-op|full-shard wraps the model in FullyShardedDataParallel instead of DDP
(ShardingStrategy.SHARD_GRAD_OP: ZeRO-2; FULL_SHARD: ZeRO-3), one FSDP unit per block (Linear + ReLU)
and one for the rest (the head).

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
    parser.add_argument("--zero-optimizer", action="store_true",
                        help="wrap the optimizer in ZeroRedundancyOptimizer (ZeRO stage 1)")
    parser.add_argument("--fsdp", choices=["shard-grad-op", "full-shard"],
                        help="FullyShardedDataParallel instead of DDP: ZeRO-2 (shard-grad-op) or ZeRO-3 (full-shard)")
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


def wrap_model(args, module, device):
    """DDP, or FSDP with --fsdp (one unit per block, the root holding the head)."""
    if not args.fsdp:
        return DistributedDataParallel(module, device_ids=[device], bucket_cap_mb=args.bucket_cap_mb,
                                       gradient_as_bucket_view=args.grad_as_bucket_view)
    from torch.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    strategy = {"shard-grad-op": ShardingStrategy.SHARD_GRAD_OP, "full-shard": ShardingStrategy.FULL_SHARD}
    return FullyShardedDataParallel(module, sharding_strategy=strategy[args.fsdp], device_id=device,
                                    auto_wrap_policy=ModuleWrapPolicy({nn.Sequential}))


def full_parameter_checksum(args, model):
    """The checksum of the whole parameters: FSDP's are each rank's shards, gathered for it."""
    if not args.fsdp:
        return parameter_checksum(model)
    from torch.distributed.fsdp import FullyShardedDataParallel
    with FullyShardedDataParallel.summon_full_params(model):
        return parameter_checksum(model)


def make_optimizer(args, model):
    if not args.zero_optimizer:
        return train_common.make_optimizer(args, model)
    from torch.distributed.optim import ZeroRedundancyOptimizer
    optimizer_class = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[args.optimizer]
    options = {"sgd": {"lr": 0.01, "momentum": 0.9}, "adam": {"lr": 1e-3},
               "adamw": {"lr": 1e-3, "weight_decay": 0.01}}[args.optimizer]
    optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=optimizer_class, **options)
    # The rank's shard: the parameters whose state it keeps (what `whatif --zero 1` divides by the ranks).
    shard = sum(p.numel() * p.element_size() for group in optimizer.optim.param_groups for p in group["params"])
    say_line(f"rank {dist.get_rank()}: optimizer shard parameter bytes {shard}")
    return optimizer


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
    for option in ("oracle_labels", "script_labels", "recompute_labels", "profiler_trace", "buckets_out"):
        if getattr(args, option):
            setattr(args, option, getattr(args, option).replace("{rank}", str(rank)))
    if args.fsdp and args.zero_optimizer:
        print("ddp_train: --fsdp shards the optimizer state itself; --zero-optimizer is for DDP", file=sys.stderr)
        sys.exit(2)
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
        module = mlp_train.MLP(a).to(device)
        parameter_bytes = sum(p.numel() * p.element_size() for p in module.parameters())
        model = wrap_model(a, module, device)
        say_line(f"rank {rank}: parameters after DDP's broadcast {full_parameter_checksum(a, model)}")
        say_line(f"rank {rank}: parameter bytes {parameter_bytes}")
        models.append(model)
        return model

    train_common.train(f"ddp_train rank {rank}", args, build_model, mlp_train.make_batch,
                       nn.functional.cross_entropy, make_optimizer)
    if args.buckets_out:
        with open(args.buckets_out, "w") as out:
            for p in models[0].parameters():
                out.write(f"grad\t{p.grad.data_ptr():#x}\t{p.grad.numel() * p.grad.element_size()}\n")
    if args.list_nvidia_libraries:
        list_nvidia_libraries(rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
