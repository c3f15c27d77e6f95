#!/bin/sh
# Times `report` on a synthetic trace of 10 M kernels (generated once, then reused).
#   bench/analyzer/run_benchmark.sh BUILD_DIR [TRACE]   (default trace: /tmp/tbdprof-bench-10M.sqlite)
# Prints wall time, CPU time and peak RSS of each format; exits 1 when text report exceeds 3 s or 1 GB.
set -eu
# --help: the comment above; an option it does not know: one message, exit 2.
case "${1:-}" in
-h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
-*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac
build=${1:?usage: run_benchmark.sh BUILD_DIR [TRACE]}
trace=${2:-/tmp/tbdprof-bench-10M.sqlite}
if [ ! -f "$trace" ]; then
    "$build/bin/tbdprof_trace_generator" "$trace" --kernels 10000000
fi
echo "trace: $trace ($(du -h "$trace" | cut -f1))"
status=0
for format in text json html; do
    log=$(mktemp)
    TBDPROF_ANALYZER_TIMING=1 /usr/bin/time -v "$build/bin/tbdprof-analyze" report "$trace" --format $format -o /dev/null 2>"$log"
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$log")
    user=$(sed -n 's/.*User time (seconds): //p' "$log")
    sys=$(sed -n 's/.*System time (seconds): //p' "$log")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$log")
    echo "report --format $format: wall $wall, user ${user}s, system ${sys}s, max RSS $((rss / 1024)) MiB"
    grep "tbdprof analyzer:" "$log" | sed 's/^/    /'
    if [ "$format" = text ]; then
        seconds=$(echo "$wall" | awk -F: '{ print ($1 * 60) + $2 }')
        if awk "BEGIN { exit !($seconds > 3.0) }"; then echo "    over 3 s"; status=1; fi
        if [ "$rss" -gt 1048576 ]; then echo "    over 1 GB"; status=1; fi
    fi
    rm -f "$log"
done
exit $status
