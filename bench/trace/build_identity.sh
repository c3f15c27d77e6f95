#!/usr/bin/env bash
# Builds each run directory with two builds of tbdprof-build-trace and compares what they wrote: the
# sorted rows of every table and `tbdprof report --format json` (the trace's path masked). With
# TIME=1 each build also runs under /usr/bin/time -v and its peak RSS and CPU are printed. Used to
# show that a change to the trace build leaves the trace identical (docs/benchmarks.md, "Trace build
# memory"); the run directories come from record_build_inputs.sh.
#
#   bench/trace/build_identity.sh OLD_BUILD_TRACE NEW_BUILD_TRACE TBDPROF RUN_DIR...
#
# TBDPROF writes both reports. Exit status: 0 all identical; 1 a difference or a failed build
# (printed); 2 usage.
set -euo pipefail
if [ $# -lt 4 ]; then
    echo "usage: $0 OLD_BUILD_TRACE NEW_BUILD_TRACE TBDPROF RUN_DIR..." >&2
    exit 2
fi
old=$1 new=$2 tbdprof=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/build-identity.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Every table, rows sorted (dump_tables).
source "$(dirname "$0")/../common/dump_tables.sh"

# Peak RSS (MiB) and user + system CPU (s) from /usr/bin/time -v's report.
resources() {
    awk -F': ' '/Maximum resident/ { rss = $2 } /User time/ { user = $2 } /System time/ { sys = $2 }
        END { printf "peak RSS %.1f MiB, CPU %.2f s (%.2f + %.2f)", rss / 1024, user + sys, user, sys }' "$1"
}

status=0
for run in "$@"; do
    name=$(basename "$run")
    for side in old new; do
        bin=${!side}
        trace="$work/trace.sqlite"  # one path for both: the report names it
        rm -f "$trace"
        if [ "${TIME:-0}" = 1 ]; then
            /usr/bin/time -v -o "$work/$side.time" "$bin" "$run" "$trace" >"$work/$side.build.txt" 2>&1 || true
        else
            "$bin" "$run" "$trace" >"$work/$side.build.txt" 2>&1 || true
        fi
        if [ ! -f "$trace" ]; then
            echo "FAILED: $name ($side): $(tail -3 "$work/$side.build.txt")"
            status=1
            continue 2
        fi
        dump_tables "$trace" >"$work/$side.dump"
        "$tbdprof" report "$trace" --format json 2>/dev/null | sed "s|$trace|TRACE|g" >"$work/$side.report.json"
    done
    times=""
    if [ "${TIME:-0}" = 1 ]; then
        times=" old: $(resources "$work/old.time"); new: $(resources "$work/new.time")"
    fi
    compare_sides "$work" "$name" "$times" || status=1
done
exit $status
