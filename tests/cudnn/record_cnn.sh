#!/usr/bin/env bash
# Records cnn_train (cuDNN) with `tbdprof --sim` and the simulated GPU's truth, then checks:
#  - the FLOPs of the trace's library calls equal the truth's kernel FLOPs and the program's own
#    count from its network shapes (flops_per_iteration x iterations), exactly;
#  - every truth kernel with FLOPs was launched inside a recorded library call;
#  - every workspace passed to a cuDNN call is an allocation tagged 'workspace';
#  - the convolutions' compute type and the truth's kernel precision follow --math (FP32 under fma,
#    TF32 under tf32).
#   record_cnn.sh TBDPROF CNN_TRAIN MATH [sample options...]
# With REQUIRE_WORKSPACE=0 a run whose cuDNN calls get no workspace passes (the backend API's FMA
# engines need none).
set -u
tbdprof=$1 program=$2 math=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-cnn-XXXXXX")
trap 'rm -rf "$work"' EXIT
iterations=4
if ! TBDSIM_TRUTH="$work/truth.tsv" "$tbdprof" --sim -o "$work/trace.sqlite" -- "$program" --iterations $iterations \
        --math "$math" "$@" >"$work/out" 2>"$work/err"; then
    echo "recording failed:"; cat "$work/out" "$work/err"; exit 1
fi
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
q() { sqlite3 "$work/trace.sqlite" "$1"; }

per_iteration=$(sed -n 's/^cnn_train: flops_per_iteration=//p' "$work/out")
[ -n "$per_iteration" ] || fail "no flops_per_iteration line"
expected=$(awk -v p="$per_iteration" -v i=$iterations 'BEGIN { printf "%.0f", p * i }')
truth=$(awk -F'\t' '$1 == "kernel" { s += $7 } END { printf "%.0f", s }' "$work/truth.tsv")
trace=$(q "SELECT printf('%.0f', total(flops)) FROM library_calls")
echo "FLOPs: program $expected, truth $truth, trace $trace"
[ "$truth" = "$expected" ] || fail "truth FLOPs $truth != program's $expected"
[ "$trace" = "$expected" ] || fail "trace FLOPs $trace != program's $expected"

# Kernels with FLOPs in the truth, by correlation id, must all be inside a library call in the trace.
truth_flop_kernels=$(awk -F'\t' '$1 == "kernel" && $7 > 0' "$work/truth.tsv" | wc -l)
trace_library_kernels=$(q "SELECT count(*) FROM kernels k JOIN library_calls l ON l.id = k.library_call WHERE l.flops > 0")
[ "$truth_flop_kernels" -eq "$trace_library_kernels" ] ||
    fail "$truth_flop_kernels truth kernels with FLOPs, $trace_library_kernels kernels of FLOP-carrying calls"

calls_with_workspace=$(q "SELECT count(*) FROM library_calls WHERE name LIKE 'cudnn%' AND workspace != 0")
tagged=$(q "SELECT count(*) FROM library_calls l JOIN allocations a ON l.workspace >= a.address
             AND l.workspace < a.address + a.bytes AND a.alloc_ns <= l.begin_ns
             AND (a.free_ns IS NULL OR a.free_ns >= l.end_ns)
             JOIN allocation_categories c ON c.allocation = a.id
             WHERE l.name LIKE 'cudnn%' AND l.workspace != 0 AND c.category = 'workspace'")
echo "cuDNN calls with a workspace: $calls_with_workspace, tagged workspace: $tagged"
[ "$calls_with_workspace" -gt 0 ] || [ "${REQUIRE_WORKSPACE:-1}" = 0 ] || fail "no cuDNN call got a workspace"
[ "$tagged" -eq "$calls_with_workspace" ] || fail "workspaces not all tagged workspace"

if [ "$math" = tf32 ]; then want_compute=77 want_precision=2; else want_compute=68 want_precision=1; fi
wrong=$(q "SELECT count(*) FROM library_calls WHERE op LIKE 'convolution_%' AND op != 'convolution_backward_bias'
            AND compute_type != $want_compute")
convolutions=$(q "SELECT count(*) FROM library_calls WHERE op LIKE 'convolution_%' AND op != 'convolution_backward_bias'")
[ "$convolutions" -gt 0 ] || fail "no convolution library calls"
[ "$wrong" -eq 0 ] || fail "$wrong convolution calls without compute type $want_compute"
conv_kernels=$(awk -F'\t' -v p=$want_precision '$1 == "kernel" && $12 ~ /convolve_sgemm|dgrad|wgrad|fprop/ && $11 == p' \
    "$work/truth.tsv" | wc -l)
[ "$conv_kernels" -gt 0 ] || fail "no convolution kernel ran at precision $want_precision"

[ "$failures" -eq 0 ] && echo "OK"
exit $((failures > 0))
