#!/usr/bin/env python3
"""PyTorch's own caching allocator: samples/pytorch/cnn_train.py recorded at two batch sizes on the
simulated GPU (default allocator), each predicted from the other with `tbdprof whatif`, against the
measured peak (docs/whatif.md, "PyTorch's own caching allocator"):
  - within TOLERANCE of the measured peak both ways;
  - "fits" is never said for a device one byte below the measured peak.
Exit 77 (skipped) with the reason when PyTorch is absent.

  predict_pytorch.py SAMPLES_DIR      (env: TBDPROF; TBDPROF_TORCH_PYTHON or TBDPROF_TORCH_VENV)
"""
import json
import os
import subprocess
import sys
import tempfile

BATCHES = (32, 64)
STEPS = 4
TOLERANCE = 0.03


def torch_python():
    venv = os.environ.get("TBDPROF_TORCH_VENV", os.path.join(os.environ.get("HOME", "/tmp"), ".cache/tbdprof/torch-venv"))
    python = os.environ.get("TBDPROF_TORCH_PYTHON", os.path.join(venv, "bin", "python"))
    probe = "import importlib.util as u; assert u.find_spec('torch')"
    if not os.access(python, os.X_OK) or subprocess.run([python, "-c", probe], capture_output=True).returncode != 0:
        print(f"SKIP: no PyTorch at {python} (scripts/torch-venv.sh installs it)")
        sys.exit(77)
    return python


def run(command, env=None, allowed=(0,)):
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode not in allowed:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
    return done


def record(tbdprof, python, script, batch, work):
    path = os.path.join(work, f"batch{batch}.sqlite")
    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)  # PyTorch's default caching allocator
    done = run([tbdprof, "--sim", "-o", path, "--", python, script, "--batch", str(batch), "--steps", str(STEPS)],
               env=env, allowed=(0, 1, 2, 127))
    if "libnccl.so.2: cannot open shared object file" in done.stdout + done.stderr:
        print("SKIP: the simulated NCCL (libnccl.so.2) is not built; PyTorch's CUDA library links it")
        sys.exit(77)
    if done.returncode != 0:
        sys.exit(f"recording batch {batch} failed ({done.returncode})\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
    return path


def whatif(tbdprof, path, *options):
    return json.loads(run([tbdprof, "whatif", path, "--format", "json", *options]).stdout)


def main():
    tbdprof = os.environ.get("TBDPROF")
    if not tbdprof or len(sys.argv) != 2:
        sys.exit("usage: TBDPROF=... predict_pytorch.py SAMPLES_DIR")
    python = torch_python()
    script = os.path.join(sys.argv[1], "cnn_train.py")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        traces = {b: record(tbdprof, python, script, b, work) for b in BATCHES}
        measured = {b: whatif(tbdprof, traces[b])["scenarios"][0]["peak_bytes"] for b in BATCHES}
        for recorded in BATCHES:
            for target in BATCHES:
                if target == recorded:
                    continue
                batch = ["--batch-size", str(target), "--batch-size-recorded", str(recorded)]
                predicted = whatif(tbdprof, traces[recorded], *batch)["scenarios"][-1]["peak_bytes"]
                error = (predicted - measured[target]) / measured[target]
                print(f"| cnn_train.py | {recorded} | {target} | {measured[target]:,} | {predicted:,} | {error:+.2%} |")
                if abs(error) > TOLERANCE:
                    failures.append(f"batch {recorded} -> {target}: off by {error:+.2%} (bound {TOLERANCE:.0%})")
                below = whatif(tbdprof, traces[recorded], *batch, "--device-memory", str(measured[target] - 1))
                if below["scenarios"][-1]["fits"]:
                    failures.append(f"batch {recorded} -> {target}: 'fits' on a device one byte below the measured peak")
    for failure in failures:
        print(f"FAIL: {failure}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
