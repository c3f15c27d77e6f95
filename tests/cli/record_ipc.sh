#!/usr/bin/env bash
# CUDA IPC under tbdprof: a parent exports a 2 MiB allocation, a second process opens it, checks it
# and writes to it (ipc_program exits 1 unless the bytes cross both ways). The trace has both
# processes; the buffer is the parent's allocation only (the child's opened memory is not counted
# again), and the child's copy and set are there.
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}"
cd "$WORK" || exit 1
"$TBDPROF" --sim -o "$WORK/trace.sqlite" -- "$TBDPROF_BIN_DIR/ipc_program" >"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -eq 0 ] && pass "$(tail -1 "$WORK/out")" || fail "exit $status: $(cat "$WORK/out" "$WORK/err")"
[ -s "$WORK/trace.sqlite" ] || { fail "no trace"; finish; }
q() { sqlite3 "$WORK/trace.sqlite" "$1"; }
[ "$(q 'SELECT count(*) FROM processes')" -eq 2 ] && pass "two processes" || fail "processes: $(q 'SELECT count(*) FROM processes')"
allocs=$(q "SELECT count(*) FROM allocations WHERE bytes = 2097152")
[ "$allocs" -eq 1 ] && pass "one 2 MiB allocation (the exporter's)" || fail "$allocs allocations of 2 MiB"
child_sets=$(q "SELECT count(*) FROM sets WHERE process NOT IN (SELECT process FROM allocations)")
[ "$child_sets" -ge 1 ] && pass "the child's set into the parent's memory is recorded" || fail "child sets: $child_sets"
finish
