"""The tagger's forward/backward/optimizer phases of a PyTorch sample against the script's own marks.

Records SCRIPT under `tbdprof --sim` with --phases (train_common.py: each step's host start of
forward, backward and the optimizer, on CLOCK_MONOTONIC, the trace's clock), tags the trace and
compares each boundary the tagger found (the `phases` table, trace-relative, plus the run's
start_monotonic_ns) with the mark. The marks lie just before each phase's first launch, so an
error is the host time from the mark to the tagger's boundary. A boundary must lie inside the
script's own phase (from its mark to the next phase's): no timed bound, the host's load moves
only where inside. --max-error (fraction of the step; 0, the default: none) adds a timed bound for
runs by hand. The first step is shown, not judged (--from-step): it makes the optimizer's state and
loads every kernel, and main's optimizer boundary fell 0.3 ms before its mark there in one of four
recordings. Exit 1 when a boundary of a judged step is missing or outside; 77 without the simulated
NCCL PyTorch links (as the other samples' tests).

    phases_test.py --python PY --tbdprof TBDPROF [--max-error 0] [--from-step 1] [--keep DIR] SCRIPT [SCRIPT OPTIONS...]
"""

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile

BOUNDARIES = ("forward", "backward", "optimizer")


def record(args, work):
    trace, marks = os.path.join(work, "run.sqlite"), os.path.join(work, "phases.tsv")
    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)  # PyTorch's caching allocator, as the samples' default
    command = [args.tbdprof, "--sim", "-o", trace, "--", args.python, args.script, "--phases", marks, *args.options]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        if "libnccl" in done.stdout + done.stderr:
            print("skipped: the simulated NCCL (libnccl.so.2) is not built; PyTorch's CUDA library links it")
            sys.exit(77)
        sys.exit(f"recording failed ({done.returncode})\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    done = subprocess.run([args.tbdprof, "tag", trace, "-q"], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"tbdprof tag failed ({done.returncode})\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return trace, marks


def tagger_phases(trace):
    """iteration -> {phase: host begin (CLOCK_MONOTONIC ns)}."""
    db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
    start_ns = db.execute("SELECT start_monotonic_ns FROM run").fetchone()[0]
    found = {}
    for iteration, name, begin_ns in db.execute("SELECT iteration, kind, begin_ns FROM phases"):
        found.setdefault(iteration, {})[name] = begin_ns + start_ns
    return found


def truth_steps(marks):
    with open(marks) as lines:
        return [[int(x) for x in line.split("\t")] for line in lines if line.strip()]


def compare(found, steps, max_error, from_step=1):
    """Prints one row per step; returns the failures of steps from `from_step` on."""
    failures = []
    print("| step | step ms | " + " | ".join(f"{b} error ms" for b in BOUNDARIES) + " |")
    for index, forward, backward, optimizer, end in steps:
        # The tagger's iteration of this step: its forward begins inside the step.
        phases = next((p for p in found.values() if forward <= p.get("forward", -1) < end), None)
        step_ns = end - forward
        if phases is None or any(b not in phases for b in BOUNDARIES):
            print(f"| {index} | {step_ns / 1e6:.2f} | no phases found |")
            failures.append((index, f"step {index}: the tagger found no forward/backward/optimizer phases"))
            continue
        marks = (forward, backward, optimizer, end)
        errors = [phases[b] - truth for b, truth in zip(BOUNDARIES, marks)]
        print(f"| {index} | {step_ns / 1e6:.2f} | " + " | ".join(f"{e / 1e6:+.3f}" for e in errors) + " |")
        for k, (name, error) in enumerate(zip(BOUNDARIES, errors)):
            # The phase's first launch follows its mark and precedes the next phase's mark: a
            # boundary outside that span is wrong however the host's timing went.
            if not marks[k] <= phases[name] < marks[k + 1]:
                failures.append((index, f"step {index}: {name} begins {error / 1e6:+.3f} ms from the script's mark, "
                                f"outside the script's {name} phase"))
            elif max_error and abs(error) > max_error * step_ns:
                failures.append((index, f"step {index}: {name} begins {error / 1e6:+.3f} ms from the script's mark "
                                f"(bound {max_error:.0%} of the {step_ns / 1e6:.2f} ms step)"))
    return [text for index, text in failures if index >= from_step]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True)
    parser.add_argument("--tbdprof", required=True)
    parser.add_argument("--max-error", type=float, default=0.0,
                        help="also bound each boundary's error to this fraction of its step (0: no timed bound)")
    parser.add_argument("--from-step", type=int, default=1,
                        help="judge steps from this one on (default 1: the first step, which makes the "
                             "optimizer's state and loads the kernels, is shown, not judged)")
    parser.add_argument("--keep", metavar="DIR", help="record into DIR and keep the trace and marks")
    parser.add_argument("script")
    parser.add_argument("options", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        trace, marks = record(args, args.keep)
        failures = compare(tagger_phases(trace), truth_steps(marks), args.max_error, args.from_step)
    else:
        with tempfile.TemporaryDirectory() as work:
            trace, marks = record(args, work)
            failures = compare(tagger_phases(trace), truth_steps(marks), args.max_error, args.from_step)
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
