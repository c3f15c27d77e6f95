"""Holistic Trace Analysis's side of bench/interop/hta_compare.sh: loads one Kineto trace with HTA and
runs the analyses closest to `tbdprof report` (kernel breakdown by type and kernel, and the temporal
breakdown of GPU time: busy, idle, communication). Prints nothing on success; HTA's own log goes to
stderr."""

import os
import sys

from hta.trace_analysis import TraceAnalysis


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: hta_analysis.py TRACE.json[.gz]", file=sys.stderr)
        return 2
    path = os.path.abspath(sys.argv[1])
    analysis = TraceAnalysis(trace_files={0: os.path.basename(path)}, trace_dir=os.path.dirname(path))
    analysis.get_gpu_kernel_breakdown(visualize=False)
    analysis.get_temporal_breakdown(visualize=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
