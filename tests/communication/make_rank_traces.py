#!/usr/bin/env python3
"""Writes synthetic PyTorch profiler (Kineto) traces of a data-parallel job, one per rank, whose
communication figures are known by construction (expected_figures() below).

Each iteration (ProfilerStep#N) lasts STEP_US microseconds; in it, relative to its start:
  backward   computation  [0, 400 + extra)   extra = SLOW_EXTRA_US on the slow rank, else 0
  bucket 1   nccl         [300 + extra, 500) the slow rank reaches the collective late; the others wait
                                             for it inside their kernel, which ends with the slow one's
  optimizer  computation  [600, 700)
  bucket 2   nccl         [650, 800)
  a copy (gpu_memcpy)     [850, 900)         neither communication nor computation

usage: make_rank_traces.py OUT_DIR --ranks N [--iterations K] [--slow-rank R] [--kernels-per-iteration M]
Writes OUT_DIR/rank-<r>.json and prints the expected figures of each rank as JSON lines."""
import argparse, json, os, sys

STEP_US = 1000
SLOW_EXTRA_US = 50
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"


def iteration_kernels(extra_us, fillers):
    """(name, begin_us, end_us, category) of one iteration, relative to its start."""
    kernels = [("backward_gemm", 0, 400 + extra_us, "kernel"), (NCCL, 300 + extra_us, 500, "kernel"),
               ("sgd_update", 600, 700, "kernel"), (NCCL, 650, 800, "kernel"), ("Memcpy DtoD", 850, 900, "gpu_memcpy")]
    # Optional small computation kernels inside the backward kernel's span (more rows, same unions).
    for i in range(fillers):
        begin = 10 + (i * 380) // max(1, fillers)
        kernels.append(("filler_elementwise", begin, begin + 1, "kernel"))
    return sorted(kernels, key=lambda k: k[1])


def expected_figures(extra_us, slowest_extra_us):
    """Per iteration, in microseconds, derived by hand from the intervals above. `wait`: the time
    this rank's bucket 1 started before the slowest rank's (in one trace holding every rank)."""
    comm = (200 - extra_us) + 150
    comp = (400 + extra_us) + 100
    overlapped = 100 + 50  # [300+extra, 400+extra) and [650, 700)
    return {"time": comm, "computation": comp, "overlapped": overlapped, "exposed": comm - overlapped,
            "idle": STEP_US - (comm + comp - overlapped), "kernels": 2, "wait": slowest_extra_us - extra_us}


def device_events(device, iterations, extra_us, fillers, correlation):
    events = []
    base = 1_700_000_000_000_000 + 17  # Kineto's absolute microseconds; the same origin on every rank
    for step in range(iterations):
        t0 = base + step * STEP_US
        if device == 0:
            events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": 1, "tid": 1,
                           "ts": t0, "dur": STEP_US})
        for name, begin, end, cat in iteration_kernels(extra_us, fillers):
            correlation += 1
            stream = 14 if name == NCCL else 7
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                           "ts": t0 + 1, "dur": 1, "args": {"correlation": correlation}})
            events.append({"ph": "X", "cat": cat, "name": name, "pid": device, "tid": stream, "ts": t0 + begin,
                           "dur": end - begin, "args": {"device": device, "stream": stream, "correlation": correlation}})
    return events, correlation


def trace(devices_extra_us, iterations, fillers, distributed):
    """One trace; devices_extra_us[d]: the extra time of device d's rank."""
    events, correlation = [], 0
    for device, extra in enumerate(devices_extra_us):
        more, correlation = device_events(device, iterations, extra, fillers, correlation)
        events += more
    document = {"schemaVersion": 1,
                "deviceProperties": [{"id": d, "name": "Made-up GPU", "totalGlobalMem": 17179869184, "computeMajor": 9,
                                      "computeMinor": 0, "numSms": 132} for d in range(len(devices_extra_us))],
                "traceEvents": events}
    if distributed:
        document["distributedInfo"] = {"backend": "nccl", "rank": distributed[0], "world_size": distributed[1]}
    return document


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--ranks", type=int, required=True)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--slow-rank", type=int, default=-1)
    parser.add_argument("--kernels-per-iteration", type=int, default=5, help="at least 5; the rest are fillers")
    parser.add_argument("--one-trace", action="store_true",
                        help="one trace (OUT_DIR/all-ranks.json) with rank r on device r, no distributedInfo")
    args = parser.parse_args()
    if args.ranks < 1 or args.iterations < 2 or args.kernels_per_iteration < 5:
        sys.exit("make_rank_traces.py: need --ranks >= 1, --iterations >= 2, --kernels-per-iteration >= 5")
    os.makedirs(args.out_dir, exist_ok=True)
    extras = [SLOW_EXTRA_US if rank == args.slow_rank else 0 for rank in range(args.ranks)]
    fillers = args.kernels_per_iteration - 5
    if args.one_trace:
        with open(os.path.join(args.out_dir, "all-ranks.json"), "w") as f:
            json.dump(trace(extras, args.iterations, fillers, None), f)
    for rank, extra in enumerate(extras):
        if not args.one_trace:
            with open(os.path.join(args.out_dir, f"rank-{rank}.json"), "w") as f:
                json.dump(trace([extra], args.iterations, fillers, (rank, args.ranks)), f)
        print(json.dumps({"rank": rank, "per_iteration_us": expected_figures(extra, max(extras))}))


if __name__ == "__main__":
    main()
