#!/usr/bin/env bash
# Records backend_record_program (backend graphs whose descriptors, all but the plan, are destroyed
# before cudnnBackendExecute, as PyTorch's cudnn frontend does) under `tbdprof --sim` with the
# simulator's truth, and checks each cudnnBackendExecute library call, in order:
#  - its op and FLOPs: equal to the truth's kernel launched inside it and to the count by hand below;
#  - its operands a, b, c: the pointers the program passed for them, with their tensors' byte extents,
#    each inside a live allocation of the trace.
#   backend_record.sh TBDPROF BACKEND_RECORD_PROGRAM
set -u
tbdprof=$1 program=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-cudnn-backend-XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! TBDSIM_TRUTH="$work/truth.tsv" "$tbdprof" --sim -o "$work/trace.sqlite" -- "$program" >"$work/out" 2>"$work/err"; then
    echo "recording failed:"; cat "$work/out" "$work/err"; exit 1
fi
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
q() { sqlite3 -separator ' ' "$work/trace.sqlite" "$1"; }

# By hand: convolution 2*N*K*C*R*S*P*Q = 2*2*8*4*9*64 = 73728, forward + the bias add (1 per output
# element, 1024); attention (b*h = 8): matmuls 2*8*s_q*s_kv per unit of width, the softmax 4 per
# score (8 backward). Composite, s_q 64, s_kv 96, d 32: 2 x 3145728 + 4*49152 = 6488064. cuDNN's SDPA,
# s_q 128, s_kv 80, d 64, d_v 32: forward 163840*96 + 4*81920 = 16056320, backward 163840*256 +
# 8*81920 = 42598400. Bytes: the tensors' sizes (FP32 conv, BF16 attention).
expected="convolution_forward 74752 2048 1152 4096
convolution_backward_data 73728 4096 1152 2048
attention_forward 6488064 32768 49152 32768
attention_forward 16056320 131072 81920 65536
attention_backward 42598400 131072 81920 131072"
got=$(q "SELECT op, printf('%.0f', flops), a_bytes, b_bytes, c_bytes FROM library_calls
         WHERE name = 'cudnnBackendExecute' ORDER BY begin_ns")
[ "$got" = "$expected" ] || fail "calls recorded as
$got
want
$expected"

# The truth's kernels, one per execution, against the FLOPs of the call each ran inside.
truth=$(awk -F'\t' '$1 == "kernel" { printf "%.0f\n", $7 }' "$work/truth.tsv")
inside=$(q "SELECT printf('%.0f', l.flops) FROM kernels k JOIN library_calls l ON l.id = k.library_call
            WHERE l.name = 'cudnnBackendExecute' ORDER BY k.id")
[ -n "$truth" ] && [ "$truth" = "$inside" ] || fail "truth kernel FLOPs '$truth' != recorded call FLOPs '$inside'"

# Operands: the pointers the program passed.
passed=$(awk '$1 == "call" { print $2, $3, $4, $5 }' "$work/out")
operands=$(q "SELECT op, a, b, c FROM library_calls WHERE name = 'cudnnBackendExecute' ORDER BY begin_ns")
[ -n "$passed" ] && [ "$passed" = "$operands" ] || fail "operands '$operands', passed '$passed'"
# Each operand lies inside an allocation of the trace live at the call, its extent included.
unresolved=$(q "SELECT count(*) FROM library_calls l, (SELECT 'a' AS role UNION ALL SELECT 'b' UNION ALL SELECT 'c') r
                WHERE l.name = 'cudnnBackendExecute' AND NOT EXISTS (
                    SELECT 1 FROM allocations x
                    WHERE x.alloc_ns <= l.begin_ns AND (x.free_ns IS NULL OR x.free_ns >= l.end_ns)
                      AND CASE r.role WHEN 'a' THEN l.a >= x.address AND l.a + l.a_bytes <= x.address + x.bytes
                                      WHEN 'b' THEN l.b >= x.address AND l.b + l.b_bytes <= x.address + x.bytes
                                      ELSE l.c >= x.address AND l.c + l.c_bytes <= x.address + x.bytes END)")
[ "$unresolved" = 0 ] || fail "$unresolved operands of cudnnBackendExecute calls lie in no live allocation"
echo "$got"
[ "$failures" -eq 0 ] && echo "OK"
exit $((failures > 0))
