#!/usr/bin/env python3
"""Records one sample at several batch sizes on the simulated GPU and checks `tbdprof whatif`
against the measured peaks (docs/whatif.md):
  - the "recorded" scenario reproduces the report's own peak exactly;
  - every other batch size, predicted from the recorded one (proportional, and with --calibrate
    from a second run), is within TOLERANCE of the peak measured at that batch size;
  - "fits" is never said with a device memory below the measured peak.
Prints one markdown row per predicted batch size (the table in docs/whatif.md).

  predict_batches.py --name NAME --recorded B --calibrate B2 --batches B,B,... [--uncalibrated-tolerance X]
                     -- PROGRAM ARGS...       (env: TBDPROF, TBDPROF_BIN_DIR; the batch goes in as --batch B)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(command, allowed=(0,)):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in allowed:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout}{done.stderr}")
    return done.stdout


def record(tbdprof, program, args, batch, work):
    path = os.path.join(work, f"batch{batch}.sqlite")
    run([tbdprof, "--sim", "-o", path, "--", program, *args, "--batch", str(batch)])
    return path


def measured_peak(tbdprof, path):
    return json.loads(run([tbdprof, "report", path, "--format", "json"]))["memory"]["peak_bytes"]


def whatif(tbdprof, path, *options):
    """The JSON; exit 3 (cannot predict) is an answer too: its scenarios hold only "recorded"."""
    return json.loads(run([tbdprof, "whatif", path, "--format", "json", *options], allowed=(0, 3)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--recorded", type=int, required=True)
    parser.add_argument("--calibrate", type=int, required=True)
    parser.add_argument("--batches", required=True)
    parser.add_argument("--tolerance", type=float, default=0.03)
    parser.add_argument("--uncalibrated-tolerance", type=float, default=None,
                        help="bound for the proportional prediction (default: --tolerance)")
    parser.add_argument("--calibrate-may-refuse", action="store_true",
                        help="accept 'cannot predict' from --calibrate (runs whose allocations do not match)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    o = parser.parse_args()
    tbdprof = os.environ["TBDPROF"]
    command = o.command[1:] if o.command and o.command[0] == "--" else o.command
    program = os.path.join(os.environ["TBDPROF_BIN_DIR"], command[0])
    batches = [int(b) for b in o.batches.split(",")]
    loose = o.uncalibrated_tolerance if o.uncalibrated_tolerance is not None else o.tolerance
    failures = []
    with tempfile.TemporaryDirectory() as work:
        traces = {b: record(tbdprof, program, command[1:], b, work)
                  for b in sorted(set(batches + [o.recorded, o.calibrate]))}
        measured = {b: measured_peak(tbdprof, p) for b, p in traces.items()}
        base = traces[o.recorded]
        recorded = whatif(tbdprof, base)["scenarios"][0]
        if recorded["peak_bytes"] != measured[o.recorded]:
            failures.append(f"recorded scenario {recorded['peak_bytes']} B != report's peak {measured[o.recorded]} B")
        for b in batches:
            sizes = ["--batch-size", str(b), "--batch-size-recorded", str(o.recorded)]
            plain = whatif(tbdprof, base, *sizes)["scenarios"][1]["peak_bytes"]
            calibration = ["--calibrate", traces[o.calibrate], "--calibrate-batch-size", str(o.calibrate)]
            plain = whatif(tbdprof, base, *sizes)["scenarios"][1]["peak_bytes"]
            answer = whatif(tbdprof, base, *sizes, *calibration)
            err_plain = plain / measured[b] - 1
            row = f"| {o.name} | {o.recorded} | {b} | {measured[b]:,} | {plain:,} | {err_plain:+.2%} |"
            if answer["cannot_predict"]:
                print(f"{row} cannot predict | - |")
                if not o.calibrate_may_refuse:
                    failures.append(f"batch {b}: calibrated: cannot predict: {answer['cannot_predict']}")
            else:
                fitted = answer["scenarios"][1]["peak_bytes"]
                err_fitted = fitted / measured[b] - 1
                print(f"{row} {fitted:,} | {err_fitted:+.2%} |")
                if abs(err_fitted) > o.tolerance:
                    failures.append(f"batch {b}: calibrated prediction off by {err_fitted:+.2%} (bound {o.tolerance:.0%})")
            if abs(err_plain) > loose:
                failures.append(f"batch {b}: proportional prediction off by {err_plain:+.2%} (bound {loose:.0%})")
            # A device one byte smaller than the measured peak: the job would not fit; never say it does.
            tight = str(measured[b] - 1)
            for extra in ([], calibration):
                scenarios = whatif(tbdprof, base, *sizes, *extra, "--device-memory", tight)["scenarios"]
                if scenarios[-1]["fits"] and len(scenarios) > 1:
                    failures.append(f"batch {b}: 'fits' said for a device below the measured peak {extra[:1]}")
    for failure in failures:
        print(f"{o.name}: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
