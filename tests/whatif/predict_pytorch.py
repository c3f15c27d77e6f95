#!/usr/bin/env python3
"""PyTorch's own caching allocator: a PyTorch sample (samples/pytorch/, default cnn_train.py) recorded
at two batch sizes on the simulated GPU, each predicted from the other with `tbdprof whatif`, against
the measured peak (docs/whatif.md, "PyTorch's own caching allocator"):
  - within TOLERANCE of the measured peak both ways;
  - "fits" is never said for a device one byte below the measured peak.
The allocator is PyTorch's default caching allocator, or the one --alloc-conf sets
(PYTORCH_CUDA_ALLOC_CONF, e.g. expandable_segments:True). Exit 77 (skipped) with the reason when
PyTorch is absent.

  - the batch asked beside another scenario (--zero 2 --ranks 2, whose replay is the pool's own) is
    predicted as the batch asked alone: a scenario's prediction does not depend on what else a
    command asks (docs/whatif.md, "The smaller batch replayed too");
  - the batch with ZeRO-2 together predicts no more than the batch alone plus the combined scenario's
    'other' bytes (ZeRO's communication bucket): ZeRO removes bytes (docs/whatif.md, "A combined change
    bounded by the batch alone").

With --upward only the larger batch is predicted, from the smaller (a shape whose smaller batch the
model predicts only within its wider margin, docs/whatif.md, "Fits").

With --autocast the sample is also recorded with --bf16 (torch.autocast to bfloat16) at each batch, and
each of those runs is predicted with `--precision bf16` (autocast-style mixed precision) from the FP32
run at the same batch and, with the batch changed too, from the FP32 run at the other batch: within
TOLERANCE, and never "fits" on a device one byte below the measured peak (docs/whatif.md, "Precision").

  predict_pytorch.py SAMPLES_DIR [--script NAME] [--alloc-conf CONF] [--batches A,B] [--upward]
                     [--autocast] [-- SCRIPT-OPTIONS]
      (env: TBDPROF; TBDPROF_TORCH_PYTHON or TBDPROF_TORCH_VENV)
"""
import argparse
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


def record(tbdprof, python, script, batch, work, alloc_conf, script_options, name=""):
    path = os.path.join(work, f"batch{batch}{name}.sqlite")
    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)  # PyTorch's default caching allocator, unless asked
    if alloc_conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = alloc_conf
    done = run([tbdprof, "--sim", "-o", path, "--", python, script, "--batch", str(batch), "--steps", str(STEPS),
                *script_options], env=env, allowed=(0, 1, 2, 127))
    if "libnccl.so.2: cannot open shared object file" in done.stdout + done.stderr:
        print("SKIP: the simulated NCCL (libnccl.so.2) is not built; PyTorch's CUDA library links it")
        sys.exit(77)
    if done.returncode != 0:
        sys.exit(f"recording batch {batch} failed ({done.returncode})\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
    return path


def whatif(tbdprof, path, *options):
    return json.loads(run([tbdprof, "whatif", path, "--format", "json", *options]).stdout)


def describe_miss(tbdprof, trace, prediction):
    """What a wrong prediction came from, for a failure that a later run may not repeat (the recording's
    timing differs from run to run): the steps the tagger found, the recorded trace's categories at its
    peak and the prediction's, and the what-if's notes."""
    recorded = whatif(tbdprof, trace)["scenarios"][0]
    steps = run(["sqlite3", trace, "SELECT kind || ' ' || count(*) FROM iterations GROUP BY kind"],
                allowed=(0, 1, 127)).stdout.split("\n")
    print(f"  steps found in the recorded trace: {', '.join(x for x in steps if x) or 'none'}")
    print(f"  recorded, by category at the peak: {recorded['by_category']}")
    print(f"  predicted, by category at the peak: {prediction['scenarios'][-1]['by_category']}")
    for note in prediction.get("notes", []):
        print(f"  note: {note}")


def check_autocast(tbdprof, traces, autocast_traces, batches, name, failures):
    """Each --bf16 recording predicted with --precision bf16 from the FP32 one at its batch, and at the
    other batch with the batch changed too."""
    for target in batches:
        measured = whatif(tbdprof, autocast_traces[target])["scenarios"][0]["peak_bytes"]
        for recorded in batches:
            batch = [] if recorded == target else ["--batch-size", str(target), "--batch-size-recorded", str(recorded)]
            prediction = whatif(tbdprof, traces[recorded], *batch, "--precision", "bf16",
                                "--device-memory", str(measured - 1))
            scenario = prediction["scenarios"][-1]
            error = (scenario["peak_bytes"] - measured) / measured
            print(f"| {name} | {recorded} | {target} bf16 | {measured:,} | {scenario['peak_bytes']:,} | {error:+.2%} |")
            if abs(error) > TOLERANCE:
                failures.append(f"bf16 at batch {target} from FP32 at {recorded}: off by {error:+.2%} "
                                f"(bound {TOLERANCE:.0%})")
                describe_miss(tbdprof, traces[recorded], prediction)
            if scenario["fits"]:
                failures.append(f"bf16 at batch {target} from FP32 at {recorded}: 'fits' on a device one byte "
                                f"below the measured peak")


def main():
    tbdprof = os.environ.get("TBDPROF")
    parser = argparse.ArgumentParser(usage="TBDPROF=... predict_pytorch.py SAMPLES_DIR [options] [-- SCRIPT-OPTIONS]")
    parser.add_argument("samples")
    parser.add_argument("--script", default="cnn_train.py")
    parser.add_argument("--alloc-conf", default="")
    parser.add_argument("--batches", default=",".join(map(str, BATCHES)))
    parser.add_argument("--upward", action="store_true", help="predict only the larger batch from the smaller")
    parser.add_argument("--autocast", action="store_true", help="also record with --bf16 and predict it")
    argv = sys.argv[1:]
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    args.script_options = argv[split + 1:]
    if not tbdprof:
        sys.exit("usage: TBDPROF=... predict_pytorch.py SAMPLES_DIR [options] [-- SCRIPT-OPTIONS]")
    batches = tuple(int(b) for b in args.batches.split(","))
    name = " ".join([args.script, *args.script_options] + ([f"[{args.alloc_conf}]"] if args.alloc_conf else []))
    python = torch_python()
    script = os.path.join(args.samples, args.script)
    failures = []
    with tempfile.TemporaryDirectory() as work:
        traces = {b: record(tbdprof, python, script, b, work, args.alloc_conf, args.script_options) for b in batches}
        measured = {b: whatif(tbdprof, traces[b])["scenarios"][0]["peak_bytes"] for b in batches}
        for recorded in batches:
            for target in batches:
                if target == recorded or (args.upward and target < recorded):
                    continue
                batch = ["--batch-size", str(target), "--batch-size-recorded", str(recorded)]
                prediction = whatif(tbdprof, traces[recorded], *batch)
                predicted = prediction["scenarios"][-1]["peak_bytes"]
                error = (predicted - measured[target]) / measured[target]
                print(f"| {name} | {recorded} | {target} | {measured[target]:,} | {predicted:,} | {error:+.2%} |")
                if abs(error) > TOLERANCE:
                    failures.append(f"batch {recorded} -> {target}: off by {error:+.2%} (bound {TOLERANCE:.0%})")
                    describe_miss(tbdprof, traces[recorded], prediction)
                with_zero = whatif(tbdprof, traces[recorded], *batch, "--zero", "2", "--ranks", "2")["scenarios"]
                beside, combined = with_zero[1], with_zero[-1]
                if beside["peak_bytes"] != predicted:
                    failures.append(f"batch {recorded} -> {target}: {beside['peak_bytes']:,} B asked beside ZeRO-2, "
                                    f"{predicted:,} B asked alone")
                # ZeRO removes bytes and adds its communication bucket (category other): the batch with
                # ZeRO-2 is no more than the batch alone and the combined scenario's 'other' bytes.
                bound = predicted + combined["by_category"].get("other", 0)
                if combined["peak_bytes"] > bound:
                    failures.append(f"batch {recorded} -> {target} with ZeRO-2: {combined['peak_bytes']:,} B, over the "
                                    f"batch alone and its 'other' bytes ({bound:,} B)")
                below = whatif(tbdprof, traces[recorded], *batch, "--device-memory", str(measured[target] - 1))
                if below["scenarios"][-1]["fits"]:
                    failures.append(f"batch {recorded} -> {target}: 'fits' on a device one byte below the measured peak")
        if args.autocast:
            autocast_traces = {b: record(tbdprof, python, script, b, work, args.alloc_conf,
                                         [*args.script_options, "--bf16"], "bf16") for b in batches}
            check_autocast(tbdprof, traces, autocast_traces, batches, name, failures)
    for failure in failures:
        print(f"FAIL: {failure}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
