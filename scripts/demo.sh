#!/usr/bin/env bash
# Installs what is missing, builds, records a training run on the simulated GPU, shows the report and
# the budget check, and writes the HTML report and screenshots of the desktop viewer's views next to
# the trace. The build's output goes to a log file: the demo shows the result, not the compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup-deps.sh

out=${TBDPROF_DEMO_DIR:-build/demo}
mkdir -p "$out"
trace="$out/mlp_train.sqlite"
log="$out/build.log"

echo "== Building tbdprof (output in $log; a first build takes about 10 minutes on 2 cores)"
if ! { ensure_packages && configure_and_build build; } >"$log" 2>&1; then
    echo "The build failed; the end of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
fi
echo "built: build/bin/tbdprof"
echo
echo "== Recording: tbdprof --sim -- build/bin/mlp_train --iterations 30 --optimizer adam --host-work-us 100"
build/bin/tbdprof --sim --force -o "$trace" -- build/bin/mlp_train --iterations 30 --optimizer adam --host-work-us 100
echo
echo "== Report (also: --format markdown|json|html)"
build/bin/tbdprof report "$trace"
echo
echo "== Budget check, as a CI job would run it"
build/bin/tbdprof check "$trace" --max-peak-memory 1GiB --min-gpu-utilization 0.01
build/bin/tbdprof report "$trace" --format html --force -o "${trace%.sqlite}.html"
echo
if [ -x build/bin/tbdprof-viewer ]; then
    echo "== Desktop viewer: a screenshot of each view (build/bin/tbdprof view $trace opens the window)"
    for view in summary timeline memory kernels; do
        QT_QPA_PLATFORM=offscreen build/bin/tbdprof-viewer --screenshot "${trace%.sqlite}.$view.png" --view "$view" \
            --size 1600x900 "$trace"
    done
fi
echo
echo "== Where the results are"
echo "Trace:       $trace  (open it with sqlite3, or export it: build/bin/tbdprof export $trace --format chrome)"
echo "HTML report: ${trace%.sqlite}.html"
if [ -x build/bin/tbdprof-viewer ]; then
    echo "Screenshots: ${trace%.sqlite}.{summary,timeline,memory,kernels}.png"
fi
echo "Build log:   $log"
