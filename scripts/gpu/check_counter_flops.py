#!/usr/bin/env python3
"""Counter FLOPs of cuBLAS SGEMMs against 2mnk (the real-GPU check of `tbdprof record --metrics flops`).

Reads the JSON report of a --metrics run (tbdprof report --format json) and compares, over the library
calls whose kernels the hardware counters all counted, the FLOPs CUPTI counted with the FLOPs from the
calls' shapes (2*m*n*k for an SGEMM). Prints PASS or FAIL with the figures; exit 0 on PASS.
  check_counter_flops.py REPORT.json [TOLERANCE]   (default tolerance 0.01: within 1%)
"""
import json
import sys


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip().splitlines()[-1].strip())
        return 2
    tolerance = float(sys.argv[2]) if len(sys.argv) == 3 else 0.01
    with open(sys.argv[1]) as f:
        report = json.load(f)
    sources = report.get("flop_sources", {})
    if not sources.get("counters_collected"):
        print("FAIL: the trace has no hardware counter values (see the recording's log for CUPTI's message;"
              " profiling may be restricted to admin users: NVreg_RestrictProfilingOnAdminUsers)")
        return 1
    calls = sources.get("calls_compared", 0)
    shapes = sources.get("compared_library_flops", 0.0)
    counted = sources.get("compared_counter_flops", 0.0)
    print(f"kernels counted {sources.get('kernels_counted')}, not available {sources.get('kernels_not_available')}")
    print(f"library calls compared {calls}: 2mnk {shapes:.6g} FLOP, counters {counted:.6g} FLOP")
    if calls == 0 or shapes <= 0:
        print("FAIL: no library call had all its kernels counted")
        return 1
    ratio = counted / shapes
    verdict = "PASS" if abs(ratio - 1) <= tolerance else "FAIL"
    print(f"{verdict}: counter FLOPs / 2mnk = {ratio:.5f} (tolerance {tolerance:.0%})")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
