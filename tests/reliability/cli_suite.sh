#!/usr/bin/env bash
# The reliability suite: every reading command of the CLI (report in each format, check,
# compare, diff, export, tag) and the viewer's offscreen benchmark, over generated hostile traces
# and Kineto files. Each run must end within 60 s, never die of a signal, and either succeed or
# say why in one line (exit 1 to 3). The cases with specific outcomes are in hostile_inputs.sh,
# interrupted_outputs.sh, hostile_traces.sh and viewer/tests/hostile_traces.sh.
source "$(dirname "$0")/../cli/common.sh"
: "${TBDPROF_BIN_DIR:?}" "${TRACE_GENERATOR:?}" "${KINETO_SAMPLE:?}"
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 shell is not installed"; exit 0; }
cd "$WORK" || exit 1
viewer="$TBDPROF_BIN_DIR/tbdprof-viewer"
[ -x "$viewer" ] || { viewer=""; echo "note: no tbdprof-viewer here; the viewer is left out"; }
export QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR="$WORK/xdg"
mkdir -m 700 xdg

"$TRACE_GENERATOR" good.sqlite --kernels 20000 --kernels-per-iteration 200 >/dev/null || fail "cannot generate"
# make NAME SQL: a copy of the generated trace changed by SQL.
make() { cp good.sqlite "$1.sqlite" && sqlite3 "$1.sqlite" "$2" || fail "cannot make $1"; }
make negative "UPDATE kernels SET duration_ns = -1 - id WHERE id % 2 = 0; UPDATE copies SET duration_ns = -5;"
make null_durations "UPDATE kernels SET duration_ns = NULL; UPDATE copies SET duration_ns = NULL;"
make inverted "UPDATE iterations SET end_ns = begin_ns - 1; UPDATE ranges SET end_ns = begin_ns - 7;"
make int64_times "UPDATE run SET duration_ns = 9223372036854775807;
                  UPDATE kernels SET start_ns = 9223372036854775000 - id, duration_ns = 9223372036854775807 WHERE id % 100 = 0;
                  UPDATE allocations SET alloc_ns = -9223372036854775807, free_ns = 9223372036854775807 WHERE id % 7 = 0;"
make huge_sizes "UPDATE allocations SET bytes = 4611686018427387904 WHERE id % 3 = 0; UPDATE copies SET bytes = 9223372036854775807;"
make reversed "UPDATE kernels SET start_ns = 1000000000 - start_ns;"
make many_streams "UPDATE kernels SET stream = id; UPDATE copies SET stream = id;"
make no_rows "DELETE FROM kernels; DELETE FROM copies; DELETE FROM sets; DELETE FROM allocations;"
make one_kernel "DELETE FROM kernels WHERE id > 1; DELETE FROM iterations; DELETE FROM ranges;"
make dangling "UPDATE kernels SET function = 999999, device = 77, stream = -3 WHERE id % 5 = 0; DELETE FROM devices;"

# Kineto files: imported first (each import is itself a case), then read like the others.
cp "$KINETO_SAMPLE" k.json
sed 's/"ts": 1430, "dur": 100/"ts": -9223372036854774, "dur": 9223372036854774/' k.json >k_extreme.json
sed 's/"dur": 400}/"dur": -400}/' k.json >k_negative.json
sed 's/"name": "gemm"/"name": "\\u001b]0;owned\\u0007\\ud800"/' k.json >k_strings.json
printf '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}' >k_truncated.json
printf '[[0, 2, 1099511627776, 3], [5, 4, -1099511627776, 3], [-1, 1, 9223372036854775807, 99]]' >k_timeline.json
for kineto in k k_extreme k_negative k_strings k_truncated k_timeline; do
    timeout 60 "$TBDPROF" import "$kineto.json" -o "$kineto.sqlite" >/dev/null 2>err
    status=$?
    [ $status -ne 124 ] && [ $status -lt 128 ] || fail "import $kineto.json: exit $status"
    [ $status -eq 0 ] || [ "$(wc -l <err)" -eq 1 ] || fail "import $kineto.json: want one line: $(cat err)"
done

# run NAME -- COMMAND...: bounded, no signal, success or one line on stderr.
run() {
    local name=$1
    shift 2
    timeout 60 "$@" >/dev/null 2>err
    local status=$?
    if [ $status -eq 124 ]; then fail "$name: still running after 60 s: $*"
    elif [ $status -ge 128 ]; then fail "$name: died of signal $((status - 128)): $* $(tail -2 err)"
    elif [ $status -eq 1 ] && [ "$2" = check ] && [ ! -s err ]; then :  # a limit violated, listed on stdout
    elif [ $status -ne 0 ] && [ "$(grep -cv '^QStandardPaths' err)" -ne 1 ]; then fail "$name: want one line: $* $(cat err)"
    fi
    runs=$((runs + 1))
}
runs=0
for trace in good negative null_durations inverted int64_times huge_sizes reversed many_streams no_rows one_kernel \
             dangling k k_extreme k_negative k_strings k_timeline; do
    [ -f "$trace.sqlite" ] || continue
    for format in text json html; do run "$trace" -- "$TBDPROF" report "$trace.sqlite" --format $format; done
    run "$trace" -- "$TBDPROF" check "$trace.sqlite" --max-peak-memory 1TiB --max-iteration-time 10s
    run "$trace" -- "$TBDPROF" compare good.sqlite "$trace.sqlite" --format json
    run "$trace" -- "$TBDPROF" diff good.sqlite "$trace.sqlite"
    run "$trace" -- "$TBDPROF" export "$trace.sqlite" -o "$trace.chrome.json"
    cp "$trace.sqlite" "$trace.tagged.sqlite" && run "$trace" -- "$TBDPROF" tag "$trace.tagged.sqlite"
    [ -n "$viewer" ] && run "$trace" -- "$viewer" --benchmark "$trace.sqlite"
done
pass "$runs runs of report/check/compare/diff/export/tag${viewer:+/viewer} over 16 hostile traces and Kineto files"
finish
