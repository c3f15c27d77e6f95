#!/usr/bin/env bash
# A program that subscribes to CUPTI itself (as torch.profiler or Nsight would) runs under tbdprof:
# tbdprof says once that another tool holds CUPTI, records with host-side timing, and the program's
# own CUPTI client gets every kernel record (the program exits 1 otherwise). The collector's message
# comes from tbdprof after the program's output, not from inside the program while it runs.
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}"
cd "$WORK" || exit 1
"$TBDPROF" --sim -o "$WORK/trace.sqlite" -- "$TBDPROF_BIN_DIR/collector_scenarios" cupti_held \
    >"$WORK/err" 2>&1
status=$?
[ "$status" -eq 0 ] || fail "tbdprof exited $status: $(cat "$WORK/err")"
program_line=$(grep -n "^self-traced kernels: 25$" "$WORK/err" | cut -d: -f1)
[ -n "$program_line" ] || fail "the program's own CUPTI records: $(cat "$WORK/err")"
message="^tbdprof: another tool holds CUPTI (CUPTI for self-tracer); recording with host-side timing$"
said=$(grep -c "$message" "$WORK/err")
[ "$said" -eq 1 ] && pass "said once that CUPTI is held" || fail "message $said times: $(cat "$WORK/err")"
message_line=$(grep -n "$message" "$WORK/err" | cut -d: -f1)
[ -n "$program_line" ] && [ "${message_line:-0}" -gt "$program_line" ] && pass "said after the program's output" ||
    fail "the message came before the program's output ended: $(cat "$WORK/err")"
[ -s "$WORK/trace.sqlite" ] || { fail "no trace"; finish; }
clock=$(sqlite3 "$WORK/trace.sqlite" "SELECT clock_source FROM run")
[ "$clock" = host ] && pass "host-side timing" || fail "clock source '$clock', want host"
kernels=$(sqlite3 "$WORK/trace.sqlite" "SELECT count(*) FROM kernels")
[ "$kernels" -eq 25 ] && pass "every launch recorded ($kernels)" || fail "$kernels kernels, want 25"
finish
