#!/usr/bin/env bash
# The C++ cuDNN sample and CUDA graph replay under tbdprof on the machine's GPU (unverified on
# hardware until a lent session runs it; docs/real-gpu.md): cnn_train with cuDNN's legacy API and
# its backend (graph) API, each recorded with its labels, the trace's library-call FLOPs against the
# program's own count (flops_per_iteration x iterations) and the tags against the labels; then
# graph_replay recorded (its replays' kernels must carry a graph launch). Short: about a minute.
#
#   cudnn_graph_check.sh BIN_DIR OUT_DIR [--sim]
#
# BIN_DIR holds tbdprof, tbdprof-tag-accuracy, cnn_train and graph_replay. --sim runs it on the
# simulated GPU (the rehearsal). Exit status: the number of failed checks.
set -uo pipefail
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: cudnn_graph_check.sh BIN_DIR OUT_DIR [--sim]" >&2; exit 2; }
bin=$1 out=$2
sim=()
[ "${3:-}" = --sim ] && sim=(--sim)
mkdir -p "$out" || exit 2
# The GPU machine may lack the sqlite3 shell; Python's module reads the trace.
q() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$1" "$2"; }
failures=0
fail() { echo "   FAIL: $*"; failures=$((failures + 1)); }
iterations=4
for api in legacy backend; do
    name=cnn_$api
    echo "== $name: cnn_train --api $api --iterations $iterations"
    if ! TBD_SAMPLE_LABELS="$out/$name.labels" timeout --kill-after=10 120 "$bin/tbdprof" "${sim[@]}" --force \
            -o "$out/$name.sqlite" -- "$bin/cnn_train" --api "$api" --iterations $iterations >"$out/$name.log" 2>&1; then
        fail "recording failed"; tail -5 "$out/$name.log"; continue
    fi
    grep -E 'note|warning' "$out/$name.log" | head -5
    per_iteration=$(sed -n 's/^cnn_train: flops_per_iteration=//p' "$out/$name.log")
    trace=$(q "$out/$name.sqlite" "SELECT printf('%.0f', total(flops)) FROM library_calls")
    expected=$(awk -v p="${per_iteration:-0}" -v i=$iterations 'BEGIN { printf "%.0f", p * i }')
    zero=$(q "$out/$name.sqlite" "SELECT count(*) FROM library_calls WHERE name LIKE 'cudnn%' AND coalesce(flops, 0) = 0
                                         AND op LIKE 'convolution%'")
    echo "   FLOPs: program $expected, trace $trace; convolution calls recorded with 0 FLOPs: $zero"
    [ -n "$per_iteration" ] && [ "$trace" = "$expected" ] || fail "trace FLOPs $trace != program's $expected"
    "$bin/tbdprof-tag-accuracy" "$out/$name.sqlite" "$out/$name.labels" >"$out/$name.accuracy.txt" 2>&1
    grep -m1 '^accuracy' "$out/$name.accuracy.txt" | sed 's/^/   /'
    # The simulated GPU's run scores 0.9999 (a bias's bytes); 0.99 is the bar.
    accuracy=$(sed -n 's/^accuracy \([0-9.]*\) of .*/\1/p' "$out/$name.accuracy.txt" | head -1)
    awk -v a="${accuracy:-0}" 'BEGIN { exit !(a >= 0.99) }' || fail "tags agree with the labels on ${accuracy:-no} bytes share"
done
echo "== graph_replay --replays 5"
if timeout --kill-after=10 60 "$bin/tbdprof" "${sim[@]}" --force -o "$out/graph.sqlite" -- "$bin/graph_replay" --replays 5 \
        >"$out/graph.log" 2>&1; then
    counts=$(q "$out/graph.sqlite" "SELECT (SELECT count(*) FROM graph_launches) || ' graph launches, ' ||
               (SELECT count(*) FROM kernels WHERE graph_launch IS NOT NULL) || ' replayed kernels, ' ||
               (SELECT count(*) FROM kernels WHERE duration_ns IS NULL) || ' host-timed kernels'")
    echo "   $counts"
    [[ "$counts" == 5\ graph* ]] || fail "expected 5 graph launches"
else
    fail "graph_replay recording failed"; tail -5 "$out/graph.log"
fi
echo "== $failures failed check(s)"
exit "$failures"
