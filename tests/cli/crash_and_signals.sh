#!/usr/bin/env bash
# A recorded program that crashes or is interrupted still gets a trace, and tbdprof passes the
# status on (128+signal).
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}"
cd "$WORK" || exit 1
mlp="$TBDPROF_BIN_DIR/mlp_train"
kernels_in() { "$TRACE_VS_TRUTH" --count-kernels "$1" 2>/dev/null; }
# Waits for background job $1 at most 30 s (then kills it); its exit status is in $status.
wait_bounded() {
    local pid=$1 waited=0
    while kill -0 "$pid" 2>/dev/null && [ $waited -lt 300 ]; do sleep 0.1; waited=$((waited + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
        fail "process $pid still running 30 s after the signal"
        kill -KILL "$pid"
    fi
    wait "$pid"
    status=$?
}

# 1. The command itself dies of SIGSEGV after CUDA work: status 139, a crash message, a full trace.
"$TBDPROF" --sim -o crash.sqlite -- bash -c '"$0" --iterations 2 >/dev/null && kill -SEGV $$' "$mlp" 2>"$WORK/err"
status=$?
[ "$status" -eq 139 ] || fail "SIGSEGV: tbdprof exited $status, want 139"
grep -q "crashed with signal 11 (SIGSEGV); the trace may lack its last events" "$WORK/err" \
    || fail "no crash message: $(cat "$WORK/err")"
[ "$(kernels_in crash.sqlite)" -gt 0 ] || fail "the crashed run's trace has no kernels"
pass "SIGSEGV: exit 139, crash message, $(kernels_in crash.sqlite) kernels"

# 2. A CUDA process killed mid-run (SIGKILL: no chance to flush): the trace still builds.
"$TBDPROF" --sim -o killed.sqlite -- bash -c '"$0" --iterations 1000000 >/dev/null & p=$!; sleep 1.5; kill -KILL $p; wait $p' \
    "$mlp" >"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -eq 137 ] || fail "SIGKILLed child: bash reported $status, want 137; $(cat "$WORK/err")"
[ -s killed.sqlite ] || fail "no trace after SIGKILL: $(cat "$WORK/err")"
pass "SIGKILLed CUDA process: trace built ($(kernels_in killed.sqlite) kernels)"

# 3. SIGTERM sent to tbdprof reaches the command; tbdprof exits 143 with a trace.
"$TBDPROF" --sim -o term.sqlite -- "$mlp" --iterations 1000000 >/dev/null 2>"$WORK/err" &
tbdprof_pid=$!
sleep 1.5
kill -TERM "$tbdprof_pid"
wait_bounded "$tbdprof_pid"
[ "$status" -eq 143 ] || fail "SIGTERM: tbdprof exited $status, want 143; $(cat "$WORK/err")"
grep -q "was killed by signal 15 (SIGTERM)" "$WORK/err" || fail "no message for SIGTERM: $(cat "$WORK/err")"
[ "$(kernels_in term.sqlite)" -gt 0 ] || fail "SIGTERM: the trace has no kernels"
pass "SIGTERM forwarded: exit 143, $(kernels_in term.sqlite) kernels"

# 4. SIGINT sent to tbdprof (not from a terminal) is forwarded too. (A script's background jobs start
# with SIGINT ignored; env --default-signal gives tbdprof and the command the usual disposition.)
env --default-signal=INT "$TBDPROF" --sim -o int.sqlite -- "$mlp" --iterations 1000000 >/dev/null 2>"$WORK/err" &
tbdprof_pid=$!
sleep 1.5
kill -INT "$tbdprof_pid"
wait_bounded "$tbdprof_pid"
[ "$status" -eq 130 ] || fail "SIGINT: tbdprof exited $status, want 130; $(cat "$WORK/err")"
[ -s int.sqlite ] || fail "SIGINT: no trace"
pass "SIGINT forwarded: exit 130"
finish
