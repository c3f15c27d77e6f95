#!/usr/bin/env python3
"""Time per training step of a PyTorch sample on the simulated GPU: plain, under tbdprof, and under
torch.profiler with profile_memory=True (the oracle's settings), and the size of each one's trace.

    overhead.py --python PY --tbdprof TBDPROF [--repeat 3] [--workdir DIR] [--real-gpu] [--json FILE]
                SAMPLE.py [sample options...]

A plain run puts the simulated GPU's libraries (next to tbdprof: simgpu_libraries.py) first on
LD_LIBRARY_PATH, as `tbdprof --sim` does, without the collector. The time per step is the sample's
own elapsed_ms over its steps (the training loop only: start-up, the profiler's post-processing and
tbdprof's trace build are not in it); the median of --repeat runs is printed. Simulated kernels take
modelled time, so the figures say what each tool adds on the host, not what a GPU would run at.
With --real-gpu the runs use the machine's GPU and libraries (tbdprof without --sim; scripts/gpu/).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from simgpu_libraries import with_simgpu_first


def run(command, env):
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
        raise SystemExit(f"overhead.py: failed (exit {done.returncode}): {' '.join(command)}")
    found = re.search(r"steps=(\d+) .*elapsed_ms=([0-9.]+)", done.stdout)
    if not found:
        raise SystemExit(f"overhead.py: no steps/elapsed_ms line from: {' '.join(command)}")
    return float(found.group(2)) / int(found.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True)
    parser.add_argument("--tbdprof", required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir")
    parser.add_argument("--real-gpu", action="store_true", help="the machine's GPU: tbdprof without --sim")
    parser.add_argument("--json", help="also write the figures here")
    parser.add_argument("sample")
    parser.add_argument("sample_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    plain_env = dict(os.environ)
    if not args.real_gpu:
        try:
            plain_env = with_simgpu_first(plain_env, args.tbdprof)
        except ValueError as e:
            parser.error(str(e))
    sample = [args.python, args.sample, "--device", "cuda"] + args.sample_args
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.workdir or scratch
        os.makedirs(workdir, exist_ok=True)
        trace, chrome = os.path.join(workdir, "overhead.sqlite"), os.path.join(workdir, "overhead.json")
        modes = {
            "plain": lambda: run(sample, plain_env),
            "tbdprof": lambda: run([args.tbdprof, "record"] + ([] if args.real_gpu else ["--sim"]) +
                                   ["--force", "-q", "-o", trace, "--"] + sample,
                                   dict(os.environ)),
            "torch.profiler": lambda: run(sample + ["--profiler-trace", chrome], plain_env),
        }
        figures = {name: statistics.median(measure() for _ in range(args.repeat)) for name, measure in modes.items()}
        sizes = {"tbdprof": os.path.getsize(trace), "torch.profiler": os.path.getsize(chrome)}
    name = " ".join([os.path.basename(args.sample)] + args.sample_args)
    plain = figures["plain"]
    for mode, ms in figures.items():
        size = f", trace {sizes[mode] / 1e6:.2f} MB" if mode in sizes else ""
        print(f"{name}: {mode}: {ms:.1f} ms/step ({ms / plain:.2f}x plain){size}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"sample": name, "ms_per_step": figures, "trace_bytes": sizes, "repeat": args.repeat,
                       "real_gpu": args.real_gpu}, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
