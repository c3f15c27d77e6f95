#!/usr/bin/env python3
"""Records one sample without activation checkpointing and with it (the program's own --checkpoint K)
on the simulated GPU, and checks `tbdprof whatif --checkpoint every-K-layers` (and `sqrt`) predicted
from the run without it against the peak measured with it (docs/whatif.md, "Checkpointing"):
  - the predicted peak is within TOLERANCE of the measured one;
  - the predicted extra forward time per step is within TOLERANCE of the extra kernel time the
    checkpointed run measures per step;
  - "fits" is never said with a device memory one byte below the measured peak;
  - `tbdprof check --whatif` passes a limit above the prediction (with the model's error) and fails
    one below the measured peak.
Prints one markdown row per K (the table in docs/whatif.md).

  predict_checkpoint.py --name NAME --every K,K,... [--sqrt-k K] [--tolerance X]
                        -- PROGRAM ARGS...     (env: TBDPROF, TBDPROF_BIN_DIR; K goes in as --checkpoint K)
"""
import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile


def run(command, allowed=(0,)):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in allowed:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout}{done.stderr}")
    return done


def record(tbdprof, program, args, name, work):
    path = os.path.join(work, f"{name}.sqlite")
    run([tbdprof, "--sim", "-o", path, "--", program, *args])
    return path


def measured_peak(tbdprof, path):
    return json.loads(run([tbdprof, "report", path, "--format", "json"]).stdout)["memory"]["peak_bytes"]


def kernel_ns_per_step(path):
    """Device time of all kernels over the training iterations, per iteration (the recording's own)."""
    db = sqlite3.connect(path)
    steps = db.execute("SELECT COUNT(*) FROM iterations WHERE kind IS NULL OR kind != 'non_training'").fetchone()[0]
    total = db.execute("SELECT COALESCE(SUM(duration_ns), 0) FROM kernels").fetchone()[0]
    db.close()
    return total / max(steps, 1)


def whatif(tbdprof, path, *options):
    return json.loads(run([tbdprof, "whatif", path, "--format", "json", *options], allowed=(0, 3)).stdout)


def check_gate(tbdprof, path, spec, limit):
    done = run([tbdprof, "check", path, "--whatif", f"--checkpoint {spec}", "--max-peak-memory", str(limit)],
               allowed=(0, 1))
    return done.returncode


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--every", required=True, help="the K values to record and predict")
    parser.add_argument("--sqrt-k", type=int, default=None, help="K that `--checkpoint sqrt` must choose")
    parser.add_argument("--tolerance", type=float, default=0.03)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    o = parser.parse_args()
    tbdprof = os.environ["TBDPROF"]
    command = o.command[1:] if o.command and o.command[0] == "--" else o.command
    program = os.path.join(os.environ["TBDPROF_BIN_DIR"], command[0])
    failures = []
    with tempfile.TemporaryDirectory() as work:
        base = record(tbdprof, program, command[1:], "plain", work)
        base_peak = measured_peak(tbdprof, base)
        base_kernel_ns = kernel_ns_per_step(base)
        specs = [(int(k), f"every-{k}-layers") for k in o.every.split(",")]
        if o.sqrt_k:
            specs.append((o.sqrt_k, "sqrt"))
        traces = {}
        for k, spec in specs:
            if k not in traces:
                traces[k] = record(tbdprof, program, [*command[1:], "--checkpoint", str(k)], f"k{k}", work)
            trace = traces[k]
            measured = measured_peak(tbdprof, trace)
            answer = whatif(tbdprof, base, "--checkpoint", spec)
            if answer["cannot_predict"]:
                failures.append(f"{spec}: cannot predict: {answer['cannot_predict']}")
                continue
            plan = answer["checkpoint"]
            if plan["segment_layers"] != k:
                failures.append(f"{spec}: segments of {plan['segment_layers']} layers, expected {k}")
            predicted = answer["scenarios"][1]["peak_bytes"]
            error = predicted / measured - 1
            extra_measured = kernel_ns_per_step(trace) - base_kernel_ns
            extra_predicted = plan["extra_forward_ns_per_step"]
            extra_error = extra_predicted / extra_measured - 1 if extra_measured > 0 else float("inf")
            print(f"| {o.name} | {spec} | {plan['layers']} | {base_peak:,} | {measured:,} | {predicted:,} | "
                  f"{error:+.2%} | {extra_measured / 1e3:,.1f} | {extra_predicted / 1e3:,.1f} |")
            if abs(error) > o.tolerance:
                failures.append(f"{spec}: predicted peak off by {error:+.2%} (bound {o.tolerance:.0%})")
            if abs(extra_error) > o.tolerance:
                failures.append(f"{spec}: extra forward time {extra_predicted:.0f} ns predicted, "
                                f"{extra_measured:.0f} ns measured")
            tight = whatif(tbdprof, base, "--checkpoint", spec, "--device-memory", str(measured - 1))
            if tight["scenarios"][-1]["fits"]:
                failures.append(f"{spec}: 'fits' said for a device below the measured peak")
            if check_gate(tbdprof, base, spec, int(predicted * 1.031) + 1) != 0:
                failures.append(f"{spec}: check --whatif failed a limit above the prediction and its error")
            if check_gate(tbdprof, base, spec, measured - 1) != 1:
                failures.append(f"{spec}: check --whatif passed a limit below the measured peak")
    for failure in failures:
        print(f"{o.name}: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
