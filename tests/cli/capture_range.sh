#!/usr/bin/env bash
# --capture-range=cudaProfilerApi: only the work between cudaProfilerStart and cudaProfilerStop (two
# windows: 5 launches and a copy, then 2 launches) is recorded; the 8 launches outside are not.
# Allocations are recorded inside and outside the windows; the trace says which window was captured.
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}"
cd "$WORK" || exit 1
"$TBDPROF" --sim --capture-range=cudaProfilerApi -o "$WORK/trace.sqlite" -- \
    "$TBDPROF_BIN_DIR/collector_scenarios" profiler_window >"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -eq 0 ] || fail "tbdprof exited $status: $(cat "$WORK/err")"
[ -s "$WORK/trace.sqlite" ] || { fail "no trace"; finish; }
q() { sqlite3 "$WORK/trace.sqlite" "$1"; }
expect() {  # expect DESCRIPTION WANT SQL
    local got
    got=$(q "$3")
    if [ "$got" = "$2" ]; then pass "$1 ($got)"; else fail "$1: got '$got', want '$2'"; fi
}
expect "kernels inside the windows" 7 "SELECT count(*) FROM kernels"
expect "all device-timed (CUPTI off outside the windows, on inside)" cupti "SELECT clock_source FROM run"
expect "the copy inside the first window" 1 "SELECT count(*) FROM copies"
expect "allocations inside and outside" 2 "SELECT count(*) FROM allocations"
expect "the window is named" cudaProfilerApi "SELECT value FROM run_notes WHERE key = 'capture_range'"
# Without the option the same program records all 15 launches.
"$TBDPROF" --sim -o "$WORK/all.sqlite" -- "$TBDPROF_BIN_DIR/collector_scenarios" profiler_window >/dev/null 2>&1
got=$(sqlite3 "$WORK/all.sqlite" "SELECT count(*) FROM kernels")
[ "$got" = 15 ] && pass "without it: all 15 launches" || fail "without it: $got kernels, want 15"
finish
