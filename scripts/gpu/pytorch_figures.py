#!/usr/bin/env python3
"""The figures of pytorch_samples.sh as one markdown table, for docs/real-gpu.md.

    pytorch_figures.py OUT_DIR

Reads score_NAME.json (score.py), NAME.report.json (tbdprof report) and overhead_NAME.json
(overhead.py) of each sample found in OUT_DIR; a missing file leaves its cells at "-".
"""

import json
import os
import sys

SAMPLES = ("mlp_train", "cnn_train", "transformer_train")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def mib(n):
    return "-" if n is None else f"{n / 2**20:.1f} MiB"


def row(out, sample):
    score = load(os.path.join(out, f"score_{sample}.json"))
    report = load(os.path.join(out, f"{sample}.report.json"))
    overhead = load(os.path.join(out, f"overhead_{sample}.json"))
    cells = [sample]
    accuracy = score and score.get("tbdprof_vs_oracle", {}).get("accuracy")
    cells.append("-" if accuracy is None else f"{accuracy:.4f}")
    outside = score and sum(score.get("unseen_by_pytorch", {}).get("outside_pytorch", {}).values())
    cells.append(mib(outside) if score else "-")
    unseen = report and report.get("framework_unseen")
    cells += [mib(unseen["at_peak_bytes"]), mib(unseen["total_bytes"])] if unseen else ["-", "-"]
    if overhead:
        ms, sizes = overhead["ms_per_step"], overhead["trace_bytes"]
        plain = ms["plain"]
        cells += [f"{plain:.1f} ms"] + [f"{ms[m]:.1f} ms ({ms[m] / plain:.2f}x)" for m in ("tbdprof", "torch.profiler")]
        cells += [f"{sizes['tbdprof'] / 1e6:.2f} MB", f"{sizes['torch.profiler'] / 1e6:.2f} MB"]
    else:
        cells += ["-"] * 5
    return "| " + " | ".join(cells) + " |"


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: pytorch_figures.py OUT_DIR", file=sys.stderr)
        return 2
    print("| sample | tbdprof vs torch.profiler (corrected) | outside PyTorch's allocator (score.py) | "
          "unseen at peak (report) | unseen in total (report) | plain | under tbdprof | under torch.profiler | "
          "tbdprof trace | torch.profiler trace |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for sample in SAMPLES:
        print(row(sys.argv[1], sample))
    return 0


if __name__ == "__main__":
    sys.exit(main())
