#!/usr/bin/env bash
# The program must never be broken by being profiled: fork children with and without
# CUDA, exec with the collector loaded. Each program runs without tbdprof too: the outcome must match.
source "$(dirname "$0")/../cli/common.sh"
: "${FORK_EXEC_PROGRAM:?}" "${SIMGPU_DIR:?}"
cd "$WORK" || exit 1
prog=$FORK_EXEC_PROGRAM
kernels_in() { "$TRACE_VS_TRUTH" --count-kernels "$1" 2>/dev/null; }

for mode in fork_cuda fork_host; do
    LD_LIBRARY_PATH="$SIMGPU_DIR" "$prog" "$mode" >/dev/null 2>"$WORK/plain.err"
    plain=$?
    [ "$plain" -eq 0 ] || fail "$mode without tbdprof: exit $plain: $(cat "$WORK/plain.err")"
    "$TBDPROF" --sim -o "$mode.sqlite" -- "$prog" "$mode" >/dev/null 2>"$WORK/err"
    status=$?
    [ "$status" -eq 0 ] || fail "$mode under tbdprof: exit $status: $(cat "$WORK/err")"
    grep -q "terminate called" "$WORK/err" && fail "$mode: std::terminate in a process: $(cat "$WORK/err")"
    [ "$(kernels_in "$mode.sqlite")" -eq 20 ] || fail "$mode: $(kernels_in "$mode.sqlite") kernels, want the parent's 20"
    TBDPROF_CUPTI=0 "$TBDPROF" --sim -o "$mode-nocupti.sqlite" -- "$prog" "$mode" >/dev/null 2>"$WORK/err" \
        || fail "$mode with TBDPROF_CUPTI=0: $(cat "$WORK/err")"
    pass "$mode: exit 0 with and without tbdprof"
done

# exec: the new image's collector writes a new raw file; what the first image recorded is kept.
"$TBDPROF" --sim -o exec.sqlite -- "$prog" exec_self >/dev/null 2>"$WORK/err" || fail "exec_self: $(cat "$WORK/err")"
[ "$(kernels_in exec.sqlite)" -eq 20 ] || fail "exec_self: $(kernels_in exec.sqlite) kernels, want 10 before and 10 after the exec"
pass "exec with the collector loaded keeps both images' work ($(kernels_in exec.sqlite) kernels)"
finish
