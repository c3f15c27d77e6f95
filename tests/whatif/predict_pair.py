#!/usr/bin/env python3
"""Records one sample twice on the simulated GPU, as it runs now and in a planned configuration (the
program's own options for it), predicts the planned run's peak from the first with `tbdprof whatif
OPTIONS`, and checks it against the peak measured in the second (docs/whatif.md):
  - the prediction (the scenario with every change) is within TOLERANCE of the measured peak;
  - "fits" is never said with a device memory one byte below the measured peak.
Prints one markdown row (the table in docs/whatif.md).

  predict_pair.py --name NAME --whatif "WHATIF OPTIONS" --planned "PROGRAM OPTIONS" [--tolerance X]
                  -- PROGRAM ARGS...       (env: TBDPROF, TBDPROF_BIN_DIR)
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile


def run(command, allowed=(0,)):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode not in allowed:
        sys.exit(f"failed ({done.returncode}): {' '.join(command)}\n{done.stdout}{done.stderr}")
    return done.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--whatif", required=True)
    parser.add_argument("--planned", required=True)
    parser.add_argument("--tolerance", type=float, default=0.03)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    o = parser.parse_args()
    tbdprof = os.environ["TBDPROF"]
    command = o.command[1:] if o.command and o.command[0] == "--" else o.command
    program = os.path.join(os.environ["TBDPROF_BIN_DIR"], command[0])
    failures = []
    with tempfile.TemporaryDirectory() as work:
        base, planned = os.path.join(work, "base.sqlite"), os.path.join(work, "planned.sqlite")
        run([tbdprof, "--sim", "-o", base, "--", program, *command[1:]])
        run([tbdprof, "--sim", "-o", planned, "--", program, *command[1:], *shlex.split(o.planned)])
        peaks = [json.loads(run([tbdprof, "report", p, "--format", "json"]))["memory"]["peak_bytes"]
                 for p in (base, planned)]
        options = shlex.split(o.whatif)
        answer = json.loads(run([tbdprof, "whatif", base, "--format", "json", *options], allowed=(0, 3)))
        if answer["cannot_predict"]:
            sys.exit(f"{o.name}: cannot predict: {answer['cannot_predict']}")
        if answer["scenarios"][0]["peak_bytes"] != peaks[0]:
            failures.append(f"recorded scenario {answer['scenarios'][0]['peak_bytes']} B != report's {peaks[0]} B")
        predicted = answer["scenarios"][-1]["peak_bytes"]
        error = predicted / peaks[1] - 1
        print(f"| {o.name} | `{o.whatif}` | {peaks[0]:,} | {peaks[1]:,} | {predicted:,} | {error:+.2%} |")
        if abs(error) > o.tolerance:
            failures.append(f"predicted {predicted:,} B, measured {peaks[1]:,} B: {error:+.2%} "
                            f"(bound {o.tolerance:.0%})")
        tight = json.loads(run([tbdprof, "whatif", base, "--format", "json", *options,
                                "--device-memory", str(peaks[1] - 1)], allowed=(0, 3)))
        if tight["scenarios"][-1]["fits"]:
            failures.append("'fits' said for a device below the measured peak")
    for failure in failures:
        print(f"{o.name}: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
