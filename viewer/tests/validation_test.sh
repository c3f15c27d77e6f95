#!/bin/sh
# The viewer on real recorded traces: PyTorch profiler (Kineto) traces from the validation data,
# imported with `tbdprof import`, every view written with --screenshot.
#   validation_test.sh BUILD_DIR VALIDATION_DIR WORK_DIR     exit 77 (skipped) when the data is absent
set -u
build=$1
data=$2
work=$3
traces=$(ls "$data"/hta/*.pt.trace.json.gz "$data"/kineto/*.pt.trace.json.gz 2>/dev/null)
[ -n "$traces" ] || { echo "skipped: no Kineto traces under $data (validation data not present)"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
export QT_QPA_PLATFORM=offscreen
status=0
n=0
for json in $traces; do
    n=$((n + 1))
    trace=$work/trace$n.sqlite
    "$build/bin/tbdprof" import "$json" -o "$trace" >"$work/import$n.log" 2>&1 || { echo "import of $json failed"; cat "$work/import$n.log"; status=1; continue; }
    for view in summary timeline memory kernels; do
        out=$work/trace$n.$view.png
        if ! "$build/bin/tbdprof-viewer" --screenshot "$out" --view "$view" --size 1200x700 "$trace" >"$work/view.log" 2>&1; then
            echo "FAIL: $json --view $view: $(cat "$work/view.log")"
            status=1
        elif [ "$(head -c 4 "$out" | tail -c 3)" != "PNG" ]; then
            echo "FAIL: $out is not a PNG"
            status=1
        fi
    done
done
[ $status -eq 0 ] && echo "viewer on $n real traces: every view written"
exit $status
