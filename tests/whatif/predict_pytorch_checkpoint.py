#!/usr/bin/env python3
"""Activation checkpointing under PyTorch's caching allocator: a PyTorch sample (samples/pytorch/)
recorded on the simulated GPU without and with its own --checkpoint (torch.utils.checkpoint of every
block, non-reentrant), and the checkpointed run's peak predicted from the plain one with
`tbdprof whatif --checkpoint every-K-layers` (K: the weight GEMMs of one block), against the measured
peak (docs/whatif.md, "Checkpointing"):
  - within TOLERANCE of the measured peak;
  - "fits" is never said for a device one byte below the measured peak.
With --expect-refusal TEXT: the prediction must instead say it cannot predict (exit 3), the reason
holding TEXT (a shape the model is known to miss, said rather than guessed).
Prints one markdown row (the table in docs/whatif.md) with the extra forward time predicted and the
extra kernel time per step the checkpointed recording measures (reported, not checked: PyTorch's
recomputation runs kernels the plain run's forward does not, and the simulated kernels' times vary).
Exit 77 (skipped) with the reason when PyTorch is absent.

  predict_pytorch_checkpoint.py SAMPLES_DIR --script NAME --every K [--batch N] [--alloc-conf CONF]
                                [--expect-refusal TEXT] [-- SCRIPT-OPTIONS]
                                (env: TBDPROF; TBDPROF_TORCH_PYTHON or TBDPROF_TORCH_VENV)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import predict_pytorch  # noqa: E402  (the recording machinery: torch_python, run)
from predict_checkpoint import kernel_ns_per_step  # noqa: E402  (the C++ checkpoint test's measure)

STEPS = 4
TOLERANCE = 0.03


def record(tbdprof, python, script, path, alloc_conf, options):
    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)  # PyTorch's default caching allocator, unless asked
    if alloc_conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = alloc_conf
    done = predict_pytorch.run([tbdprof, "--sim", "-o", path, "--", python, script, "--steps", str(STEPS), *options],
                               env=env, allowed=(0, 1, 2, 127))
    if "libnccl.so.2: cannot open shared object file" in done.stdout + done.stderr:
        print("SKIP: the simulated NCCL (libnccl.so.2) is not built; PyTorch's CUDA library links it")
        sys.exit(77)
    if done.returncode != 0:
        sys.exit(f"recording {' '.join(options)} failed ({done.returncode})\n{done.stdout[-4000:]}{done.stderr[-4000:]}")


def whatif(tbdprof, path, *options):
    done = subprocess.run([tbdprof, "whatif", path, "--format", "json", *options], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAIL: tbdprof whatif {' '.join(options)} exited {done.returncode}\n{done.stdout[-4000:]}"
                 f"{done.stderr[-4000:]}")
    return json.loads(done.stdout)


def main():
    tbdprof = os.environ.get("TBDPROF")
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("samples")
    parser.add_argument("--script", required=True)
    parser.add_argument("--every", type=int, required=True, help="K: the weight GEMMs of one block")
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--alloc-conf", default="")
    parser.add_argument("--expect-refusal", default=None, metavar="TEXT")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    options = argv[split + 1:] + (["--batch", str(args.batch)] if args.batch else [])
    if not tbdprof:
        sys.exit("usage: TBDPROF=... " + __doc__.strip().splitlines()[-2].strip())
    python = predict_pytorch.torch_python()
    script = os.path.join(args.samples, args.script)
    name = " ".join([args.script, *options] + ([f"[{args.alloc_conf}]"] if args.alloc_conf else []))
    spec = f"every-{args.every}-layers"
    failures = []
    with tempfile.TemporaryDirectory() as work:
        plain, checkpointed = os.path.join(work, "plain.sqlite"), os.path.join(work, "checkpoint.sqlite")
        record(tbdprof, python, script, plain, args.alloc_conf, options)
        if args.expect_refusal is not None:
            done = subprocess.run([tbdprof, "whatif", plain, "--checkpoint", spec], capture_output=True, text=True)
            print(done.stdout[-2000:])
            if done.returncode != 3 or args.expect_refusal not in done.stdout:
                sys.exit(f"FAIL: expected exit 3 with '{args.expect_refusal}', got {done.returncode}")
            sys.exit(0)
        record(tbdprof, python, script, checkpointed, args.alloc_conf, [*options, "--checkpoint"])
        recorded = whatif(tbdprof, plain)["scenarios"][0]["peak_bytes"]
        measured = whatif(tbdprof, checkpointed)["scenarios"][0]["peak_bytes"]
        prediction = whatif(tbdprof, plain, "--checkpoint", spec)
        predicted = prediction["scenarios"][-1]["peak_bytes"]
        error = (predicted - measured) / measured
        c = prediction["checkpoint"]
        extra_measured_us = (kernel_ns_per_step(checkpointed) - kernel_ns_per_step(plain)) / 1e3
        print(f"| {name} | `--checkpoint {spec}` | {c['layers']} | {c['segments']} | {recorded:,} | {measured:,} | "
              f"{predicted:,} | {error:+.2%} | {extra_measured_us:.1f} | {c['extra_forward_ns_per_step'] / 1e3:.1f} |")
        for note in prediction.get("notes", []):
            print(f"  note: {note}")
        if abs(error) > TOLERANCE:
            failures.append(f"{spec}: off by {error:+.2%} (bound {TOLERANCE:.0%})")
            print(f"  recorded, by category at the peak: {whatif(tbdprof, plain)['scenarios'][0]['by_category']}")
            print(f"  measured with checkpointing: {whatif(tbdprof, checkpointed)['scenarios'][0]['by_category']}")
            print(f"  predicted, by category at the peak: {prediction['scenarios'][-1]['by_category']}")
        below = whatif(tbdprof, plain, "--checkpoint", spec, "--device-memory", str(measured - 1))
        if below["scenarios"][-1]["fits"]:
            failures.append(f"{spec}: 'fits' on a device one byte below the measured peak")
    for failure in failures:
        print(f"FAIL: {failure}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
