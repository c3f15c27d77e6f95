#!/usr/bin/env bash
# Level-3 cuBLAS beyond GEMM recorded as library calls: one row per call with its op, sizes, batch and
# FLOPs (the product's own formulas, preload/cublas_level3_hooks.cpp), and the one kernel each call
# launched tied to it. The simulator's ground truth (TBDSIM_TRUTH) has one kernel per call whose FLOPs
# (the simulator's formulas, simgpu/cublas/routine_cost.cpp) are the row's.
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}"
cd "$WORK" || exit 1
TBDSIM_TRUTH="$WORK/truth.tsv" "$TBDPROF" --sim -o "$WORK/trace.sqlite" -- "$TBDPROF_BIN_DIR/cublas_level3_program" \
    >"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -eq 0 ] || fail "tbdprof exited $status: $(cat "$WORK/out" "$WORK/err")"
[ -s "$WORK/trace.sqlite" ] || { fail "no trace"; finish; }
q() { sqlite3 -separator ' ' "$WORK/trace.sqlite" "$1"; }
want="cublasSsymm_v2 symm 128 64 128 1 2097152
cublasSsyrk_v2 syrk 128 128 32 1 528384
cublasZherk_v2 herk 64 64 16 1 266240
cublasSsyr2k_v2 syr2k 64 64 128 1 1064960
cublasStrmm_v2 trmm 100 50 50 1 250000
cublasStrsm_v2 trsm 64 128 64 1 524288
cublasStrsmBatched trsm_batched 32 16 32 4 65536
cublasSgeam geam 128 128 0 1 49152
cublasSdgmm dgmm 128 96 0 1 12288
cublasZgemm_v2 gemm 32 32 32 1 262144
cublasDgemm_v2 gemm 64 64 64 1 524288
cublasDgemmStridedBatched gemm_strided_batched 32 32 32 3 196608
cublasSgemmGroupedBatched gemm_grouped_batched 64 32 16 5 12713984"
got=$(q "SELECT name, op, m, n, k, batch, printf('%.0f', flops) FROM library_calls ORDER BY begin_ns")
[ "$got" = "$want" ] && pass "library calls, ops, sizes and FLOPs" || fail "library calls: got
$got
want
$want"
got=$(q "SELECT count(*) FROM kernels k JOIN library_calls c ON c.id = k.library_call")
[ "$got" -eq 14 ] && pass "one kernel per call, one per group" || fail "$got kernels tied to calls, want 14"
got=$(q "SELECT precision FROM library_calls WHERE op = 'herk'")
[ "$got" = "fp64" ] && pass "herk on double complex data runs in fp64" || fail "herk precision '$got'"
# Operand extents: symm's A is the 128 x 128 triangle's square (ld 128) in FP32.
got=$(q "SELECT a_bytes, b_bytes, c_bytes FROM library_calls WHERE op = 'symm'")
[ "$got" = "65536 32768 32768" ] && pass "symm operand extents" || fail "symm extents '$got'"
# The simulator's truth: the same FLOPs, kernel by kernel, in call order (the grouped GEMM, last, ran
# one kernel per group: its FLOPs are their sum).
truth=$(awk -F'\t' '$1 == "kernel" { printf "%.0f\n", $7 }' "$WORK/truth.tsv")
calls=$(q "SELECT printf('%.0f', flops) FROM library_calls ORDER BY begin_ns")
[ "$(echo "$truth" | head -12)" = "$(echo "$calls" | head -12)" ] &&
    pass "ground truth FLOPs match the recorded calls" || fail "truth FLOPs:
$truth
recorded:
$calls"
groups=$(echo "$truth" | tail -n +13 | awk '{ s += $1 } END { printf "%.0f", s }')
[ "$(echo "$truth" | wc -l)" -eq 14 ] && [ "$groups" = "$(echo "$calls" | tail -1)" ] &&
    pass "the grouped GEMM's kernels sum to its recorded FLOPs" || fail "groups: $groups, truth:
$truth"
# cublasCreate's own memory (as the real cuBLAS 13 allocated it on the H200: 1 KiB, 128 KiB and the
# 64 MiB default workspace, through the driver, freed at cublasDestroy): the tagger calls all three
# the library's own workspace, by their stacks.
got=$(q "SELECT bytes FROM allocations WHERE free_ns IS NOT NULL AND bytes IN (1024, 131072, 67108864) ORDER BY id")
[ "$got" = "1024
131072
67108864" ] && pass "cublasCreate allocates 1 KiB, 128 KiB and 64 MiB" || fail "cublasCreate's allocations: $got"
"$TBDPROF" tag "$WORK/trace.sqlite" -q >"$WORK/tag.out" 2>&1 || fail "tag failed: $(cat "$WORK/tag.out")"
got=$(q "SELECT a.bytes, c.category, c.rule FROM allocations a JOIN allocation_categories c ON c.allocation = a.id
         WHERE a.bytes IN (1024, 131072, 67108864) ORDER BY a.id")
[ "$got" = "1024 workspace library-handle-workspace
131072 workspace library-handle-workspace
67108864 workspace library-handle-workspace" ] && pass "cublasCreate's memory tagged the library's workspace" ||
    fail "cublasCreate's memory tagged: $got"
got=$(q "SELECT count(*) FROM allocation_categories c LEFT JOIN strings s ON s.id = c.reason_string
         WHERE c.rule = 'library-handle-workspace' AND coalesce(c.reason, s.text) LIKE 'allocated by cuBLAS itself inside cublasCreate%'")
[ "$got" -eq 3 ] && pass "the reason names cuBLAS and cublasCreate" || fail "$got reasons name cuBLAS and cublasCreate"
finish
