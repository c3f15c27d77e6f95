#!/usr/bin/env bash
# Level-1/2 cuBLAS recorded as library calls: one row per call with its op, sizes, FLOPs and operand
# roles (a, b read; c written) pointing into the program's allocations, and the kernel it launched
# tied to it. cublasSdot_v2's result reaches the program (it exits 1 otherwise).
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}"
cd "$WORK" || exit 1
"$TBDPROF" --sim -o "$WORK/trace.sqlite" -- "$TBDPROF_BIN_DIR/cublas_vector_program" >"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -eq 0 ] || fail "tbdprof exited $status: $(cat "$WORK/out" "$WORK/err")"
grep -q "^loss 4096.0 norm 64.0$" "$WORK/out" && pass "dot and nrm2 results" || fail "results: $(cat "$WORK/out")"
[ -s "$WORK/trace.sqlite" ] || { fail "no trace"; finish; }
q() { sqlite3 -separator ' ' "$WORK/trace.sqlite" "$1"; }
want="cublasSgemv_v2 gemv 256 128 65536.0
cublasSaxpy_v2 axpy 1 256 512.0
cublasSdot_v2 dot 1 256 512.0
cublasSnrm2_v2 nrm2 1 256 512.0
cublasSscal_v2 scal 1 256 256.0
cublasSger_v2 ger 256 128 65536.0
cublasScopy_v2 copy 1 256 0.0"
got=$(q "SELECT name, op, m, n, printf('%.1f', flops) FROM library_calls ORDER BY begin_ns")
[ "$got" = "$want" ] && pass "library calls, ops, sizes and FLOPs" || fail "library calls: got
$got
want
$want"
# Each call launched one kernel inside it, on the simulated GPU named after the operation.
got=$(q "SELECT count(*) FROM kernels k JOIN library_calls c ON c.id = k.library_call")
[ "$got" -eq 7 ] && pass "one kernel per call" || fail "$got kernels tied to calls, want 7"
# Roles: ger writes the weight matrix (the 128 KiB allocation), gemv reads it.
got=$(q "SELECT a.bytes FROM library_calls c JOIN allocations a ON c.c >= a.address AND c.c < a.address + a.bytes
         WHERE c.op = 'ger'")
[ "$got" = "131072" ] && pass "ger writes the weights" || fail "ger's c: '$got'"
got=$(q "SELECT a.bytes FROM library_calls c JOIN allocations a ON c.a >= a.address AND c.a < a.address + a.bytes
         WHERE c.op = 'gemv'")
[ "$got" = "131072" ] && pass "gemv reads the weights" || fail "gemv's a: '$got'"
finish
