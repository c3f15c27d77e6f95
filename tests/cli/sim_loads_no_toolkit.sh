#!/usr/bin/env bash
# Under --sim no library of the CUDA toolkit is mapped into the program: the runtime, driver, cuBLAS,
# cuBLASLt and the collector's CUPTI are all the simulated ones (mapped_libraries_program lists any
# mapped file under the toolkit's directory and fails if there is one).
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}" "${CUDA_TOOLKIT_ROOT:?}"
cd "$WORK" || exit 1
"$TBDPROF" --sim -o "$WORK/trace.sqlite" -- "$TBDPROF_BIN_DIR/mapped_libraries_program" "$CUDA_TOOLKIT_ROOT" \
    >"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -eq 0 ] && pass "$(tail -1 "$WORK/out")" || fail "exit $status: $(cat "$WORK/out" "$WORK/err")"
clock=$(sqlite3 "$WORK/trace.sqlite" "SELECT clock_source FROM run" 2>/dev/null)
[ "$clock" = cupti ] && pass "the simulated CUPTI timed the run" || fail "clock source '$clock'"
finish
