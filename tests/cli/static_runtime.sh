#!/usr/bin/env bash
# A program built with nvcc's default (the static CUDA runtime): under --sim, tbdprof says in one line
# that it uses the static runtime and how to rebuild it, exits non-zero and writes no trace. The same
# binary's driver-API paths (linked, or through cuGetProcAddress as the static runtime reaches a real
# driver) never use the static runtime: they run and are recorded.
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}"
program="$TBDPROF_BIN_DIR/static_runtime_program"
cd "$WORK" || exit 1

"$TBDPROF" --sim -o "$WORK/runtime.sqlite" -- "$program" runtime >"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -ne 0 ] && pass "runtime mode: exit status $status" || fail "runtime mode exited 0"
said=$(grep -c "^tbdprof: .* uses the static CUDA runtime, which the simulated GPU cannot run; rebuild it with \`nvcc -cudart shared\` (no trace written)$" "$WORK/err")
[ "$said" -eq 1 ] && pass "says so once, with the fix" || fail "message $said times: $(cat "$WORK/err")"
[ "$(grep -c '^tbdprof:' "$WORK/err")" -eq 1 ] || fail "more than one tbdprof line: $(cat "$WORK/err")"
[ -e "$WORK/runtime.sqlite" ] && fail "a trace was written" || pass "no trace file"

# The static runtime inside a library that a launcher's program dlopens: the library is named, not the
# launcher (bash) nor the program.
library="$TBDPROF_BIN_DIR/../lib/libtbd_static_runtime_library.so"
"$TBDPROF" --sim -o "$WORK/library.sqlite" -- bash -c '"$0" "$1"' "$TBDPROF_BIN_DIR/static_runtime_loader" "$library" \
    >"$WORK/out" 2>"$WORK/err"
status=$?
said=$(grep -c "^tbdprof: .*/libtbd_static_runtime_library.so (loaded by bash) carries its own static CUDA runtime, which the simulated GPU cannot run; .* (no trace written)$" "$WORK/err")
[ "$status" -ne 0 ] && [ "$said" -eq 1 ] && pass "library mode: the library is named (exit $status)" ||
    fail "library mode: exit $status, message $said times: $(cat "$WORK/err")"

for mode in driver proc; do
    "$TBDPROF" --sim -o "$WORK/$mode.sqlite" -- "$program" $mode >"$WORK/out" 2>"$WORK/err"
    status=$?
    [ "$status" -eq 0 ] || { fail "$mode mode: exit $status: $(cat "$WORK/err")"; continue; }
    grep -q "static CUDA runtime" "$WORK/err" && fail "$mode mode: blamed the static runtime"
    allocations=$(sqlite3 "$WORK/$mode.sqlite" "SELECT count(*) FROM allocations WHERE bytes = 1048576")
    copies=$(sqlite3 "$WORK/$mode.sqlite" "SELECT count(*) FROM copies")
    [ "$allocations" -eq 3 ] && [ "$copies" -eq 6 ] && pass "$mode mode recorded (3 allocations, 6 copies)" ||
        fail "$mode mode: $allocations allocations, $copies copies (want 3, 6)"
done
finish
