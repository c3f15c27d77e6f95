#!/usr/bin/env bash
# Capture control, one mode per ctest test:  capture.sh MODE
#   profiler_api    --capture-range=cudaProfilerApi on profiler_window (two windows)
#   nvtx            --capture-range=nvtx:capture_me on the same program (the same two windows)
#   steps_nvtx      --steps 2:3 on mlp_train --nvtx against a full recording of the same run
#   steps_launches  --steps 300:302 on profiler_window --no-marks (no NVTX: counted launches)
#   delay_duration  --delay 1.8 --duration 1.2 on profiler_window --sleep-phases (the middle phase; the
#                   program's start and first phase have 1.8 s, ample on a loaded machine)
#   bad_options     option errors: one line, exit 2
source "$(dirname "$0")/../cli/common.sh"
: "${CAPTURE_CHECK:?}" "${TBDPROF_BIN_DIR:?}"
mode=$1
cd "$WORK" || exit 1

record() {  # record NAME TBDPROF_OPTIONS... -- PROGRAM ARGS...
    local name=$1
    shift
    TBDSIM_TRUTH="$WORK/$name.truth" "$TBDPROF" --sim -o "$WORK/$name.sqlite" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
    local status=$?
    [ "$status" -eq 0 ] || { fail "$name: tbdprof exited $status: $(cat "$WORK/$name.err")"; return 1; }
    pass "$name recorded"
}

check() {
    if "$CAPTURE_CHECK" "$@"; then pass "capture_check $1"; else fail "capture_check $*"; fi
}

report_names_window() {  # the report says which window was captured
    "$TBDPROF" report "$WORK/$1.sqlite" >"$WORK/$1.report" 2>&1 || fail "report of $1 failed"
    grep -q "^Captured: $2" "$WORK/$1.report" || fail "report of $1 lacks 'Captured: $2': $(grep -i captur "$WORK/$1.report")"
}

case "$mode" in
    profiler_api)
        record api --capture-range=cudaProfilerApi -- "$TBDPROF_BIN_DIR/profiler_window" &&
            check window "$WORK/api.sqlite" "$WORK/api.truth" 2 && report_names_window api "2 windows"
        ;;
    nvtx)
        record nvtx --capture-range=nvtx:capture_me -- "$TBDPROF_BIN_DIR/profiler_window" &&
            check window "$WORK/nvtx.sqlite" "$WORK/nvtx.truth" 2 && report_names_window nvtx "2 windows"
        ;;
    steps_nvtx)
        record full -- "$TBDPROF_BIN_DIR/mlp_train" --nvtx --iterations 6 &&
            record steps --steps 2:3 -- "$TBDPROF_BIN_DIR/mlp_train" --nvtx --iterations 6 &&
            check steps "$WORK/full.sqlite" "$WORK/steps.sqlite" 2 3 && report_names_window steps "--steps 2:3"
        ;;
    steps_launches)
        # 2 launches per step: the repeating sequence is recognized at 512 launches (step ~255), so
        # steps past it are counted exactly; the window must hold 3 steps' launches.
        record launches --steps 300:302 -- "$TBDPROF_BIN_DIR/profiler_window" --no-marks --steps 400 &&
            check launches "$WORK/launches.sqlite" "$WORK/launches.truth" 2 3 && report_names_window launches "--steps 300:302"
        ;;
    delay_duration)
        record delay --delay 1.8 --duration 1.2 -- "$TBDPROF_BIN_DIR/profiler_window" --sleep-phases &&
            check window "$WORK/delay.sqlite" "$WORK/delay.truth" 1 && report_names_window delay "--delay 1800 ms --duration 1200 ms"
        ;;
    bad_options)
        for bad in "--capture-range=everything" "--steps 3" "--steps 5:2" "--delay -1" "--duration 0" \
            "--capture-range=cudaProfilerApi --steps 1:2" "--delay 1 --steps 1:2"; do
            # shellcheck disable=SC2086
            expect_status 2 "tbdprof $bad" -- "$TBDPROF" --sim $bad -- /bin/true
            [ -e "$WORK"/tbdprof-true-*.sqlite ] && fail "$bad left a trace"
        done
        ;;
    *) fail "unknown mode $mode" ;;
esac
finish
