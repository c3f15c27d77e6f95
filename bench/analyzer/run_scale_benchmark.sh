#!/bin/sh
# Memory and time of `tag` and `report` as the run grows, against SQLite's own scan of the kernels
# (docs/benchmarks.md, "Scale"). Traces come from tbdprof_trace_generator, made once per size into
# WORK and reused; `tag` runs on a copy.
#   bench/analyzer/run_scale_benchmark.sh BUILD_DIR [WORK_DIR] [KERNELS...]   (default: /tmp, 1000000 10000000)
# For each size prints wall, CPU (user + system) and peak RSS of: the bare scan (sqlite3: count and
# sums of the columns the report reads), `report`, `tag`, and how much tagging grew the file.
set -eu
case "${1:-}" in
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "$(basename "$0"): unknown option $1 (--help for usage)" >&2; exit 2 ;;
esac
build=${1:?usage: run_scale_benchmark.sh BUILD_DIR [WORK_DIR] [KERNELS...]}
work=${2:-/tmp}
[ $# -ge 2 ] && shift 2 || shift $#
sizes=${*:-1000000 10000000}
command -v sqlite3 >/dev/null || { echo "run_scale_benchmark.sh: needs the sqlite3 shell" >&2; exit 2; }

# measure LABEL COMMAND...: one line of figures from /usr/bin/time -v.
measure() {
    label=$1; shift
    log=$(mktemp)
    /usr/bin/time -v "$@" >/dev/null 2>"$log" || { echo "$label failed:"; tail -5 "$log"; rm -f "$log"; return 1; }
    awk -v label="$label" -F': ' '
        /Elapsed \(wall clock\)/ { wall = $2 }
        /User time/ { user = $2 } /System time/ { sys = $2 }
        /Maximum resident set size/ { rss = $2 }
        END { printf "  %-8s wall %s, CPU %.2f s, peak RSS %d MiB\n", label, wall, user + sys, rss / 1024 }' "$log"
    rm -f "$log"
}

for kernels in $sizes; do
    trace="$work/tbdprof-scale-$kernels.sqlite"
    [ -f "$trace" ] || "$build/bin/tbdprof_trace_generator" "$trace" --kernels "$kernels" >/dev/null
    echo "$kernels kernels: $trace ($(du -hL "$trace" | cut -f1))"
    # total(), not sum(), of the start times: 100 M nanosecond timestamps overflow sum()'s 64 bits.
    measure "scan" sqlite3 "$trace" "SELECT count(*), sum(device), sum(function), total(start_ns), sum(duration_ns),
        sum(library_call), sum(stream), count(graph_launch) FROM kernels"
    measure "report" "$build/bin/tbdprof" report "$trace" -o /dev/null
    tagged="$work/tbdprof-scale-$kernels.tagged.sqlite"
    cp "$trace" "$tagged"
    measure "tag" "$build/bin/tbdprof" tag "$tagged"
    before=$(stat -L -c %s "$trace")
    after=$(stat -c %s "$tagged")
    echo "  tagging grew the file by $((after - before)) bytes ($(awk "BEGIN { printf \"%.2f\", ($after - $before) * 100 / $before }")%)"
    rm -f "$tagged"
done
