#!/usr/bin/env bash
# The imported ResNet-50 Kineto trace (validation data, not in the repository): after tagging, the
# iterations window runs from the first step's start to the end of the last step's device work, and
# GPU utilization over it is the 55.51% the PyTorch profiler published for this trace.
#   kineto_window.sh VALIDATION_DATA_DIR      (env: TBDPROF); exit 77 (skipped) without the data
set -euo pipefail
trace="$1/kineto/worker0.1623143089861.pt.trace.json.gz"
if [ ! -f "$trace" ]; then
    echo "skipped: $trace is not here (validation data are not part of the repository)"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$TBDPROF" import "$trace" -o "$work/k.sqlite" >/dev/null
"$TBDPROF" tag "$work/k.sqlite" >/dev/null
n=$(sqlite3 "$work/k.sqlite" "SELECT count(*) FROM iterations WHERE kind = 'training' AND device_end_ns > device_begin_ns")
[ "$n" = 6 ] || { echo "FAIL: $n training iterations with device windows, expected 6"; exit 1; }
overlap=$(sqlite3 "$work/k.sqlite" "SELECT count(*) FROM iterations a JOIN iterations b ON b.idx = a.idx + 1
    WHERE b.begin_ns < a.end_ns OR b.device_begin_ns < a.device_end_ns")
[ "$overlap" = 0 ] || { echo "FAIL: $overlap overlapping iteration spans"; exit 1; }
line=$("$TBDPROF" report "$work/k.sqlite" --window iterations | grep "GPU utilization:")
echo "$line"
grep -q "GPU utilization: 55.51%" <<<"$line" || { echo "FAIL: expected 55.51% (PyTorch profiler's figure)"; exit 1; }
echo "ok"
