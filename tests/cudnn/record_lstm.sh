#!/usr/bin/env bash
# Records lstm_cudnn_train (cuDNN's RNN API, v8) with `tbdprof --sim` and the simulated GPU's truth,
# then checks:
#  - the three RNN passes were recorded as library calls, once per micro-batch each;
#  - the FLOPs of the trace's library calls equal the truth's kernel FLOPs and the program's own
#    count from its shapes (flops_per_iteration x iterations), exactly;
#  - every truth kernel with FLOPs was launched inside a recorded library call;
#  - every RNN call got its temp space, an allocation tagged 'workspace', and read the weight space
#    (forward and backward data) from an allocation tagged 'weights';
#  - the compute type and the truth's RNN kernel precision follow --math (FP32 under fma, TF32 under tf32).
#   record_lstm.sh TBDPROF LSTM_CUDNN_TRAIN MATH [sample options...]
set -u
tbdprof=$1 program=$2 math=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-lstm-XXXXXX")
trap 'rm -rf "$work"' EXIT
iterations=3
if ! TBDSIM_TRUTH="$work/truth.tsv" "$tbdprof" --sim -o "$work/trace.sqlite" -- "$program" --iterations $iterations \
        --math "$math" "$@" >"$work/out" 2>"$work/err"; then
    echo "recording failed:"; cat "$work/out" "$work/err"; exit 1
fi
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
q() { sqlite3 "$work/trace.sqlite" "$1"; }

accumulate=1
args=("$@")
for ((i = 0; i + 1 < ${#args[@]}; i++)); do [ "${args[i]}" = --accumulate ] && accumulate=${args[i + 1]}; done
micro_batches=$((iterations * accumulate))
for call in cudnnRNNForward cudnnRNNBackwardData_v8 cudnnRNNBackwardWeights_v8; do
    n=$(q "SELECT count(*) FROM library_calls WHERE name = '$call'")
    [ "$n" -eq "$micro_batches" ] || fail "$n $call calls for $micro_batches micro-batches"
done

per_iteration=$(sed -n 's/^lstm_cudnn_train: flops_per_iteration=//p' "$work/out")
[ -n "$per_iteration" ] || fail "no flops_per_iteration line"
expected=$(awk -v p="$per_iteration" -v i=$iterations 'BEGIN { printf "%.0f", p * i }')
truth=$(awk -F'\t' '$1 == "kernel" { s += $7 } END { printf "%.0f", s }' "$work/truth.tsv")
trace=$(q "SELECT printf('%.0f', total(flops)) FROM library_calls")
echo "FLOPs: program $expected, truth $truth, trace $trace"
[ "$truth" = "$expected" ] || fail "truth FLOPs $truth != program's $expected"
[ "$trace" = "$expected" ] || fail "trace FLOPs $trace != program's $expected"

truth_flop_kernels=$(awk -F'\t' '$1 == "kernel" && $7 > 0' "$work/truth.tsv" | wc -l)
trace_library_kernels=$(q "SELECT count(*) FROM kernels k JOIN library_calls l ON l.id = k.library_call WHERE l.flops > 0")
[ "$truth_flop_kernels" -eq "$trace_library_kernels" ] ||
    fail "$truth_flop_kernels truth kernels with FLOPs, $trace_library_kernels kernels of FLOP-carrying calls"

# The category the tagger gave the allocation holding address column $1 of each RNN call of name $2.
category_of() {
    q "SELECT coalesce(c.category, 'none') FROM library_calls l LEFT JOIN allocations a ON l.$1 >= a.address
        AND l.$1 < a.address + a.bytes AND a.alloc_ns <= l.begin_ns AND (a.free_ns IS NULL OR a.free_ns >= l.end_ns)
        LEFT JOIN allocation_categories c ON c.allocation = a.id WHERE l.name LIKE '$2'" | sort | uniq -c
}
workspaces=$(category_of workspace 'cudnnRNN%')
echo "RNN temp spaces: $workspaces"
[ "$(echo "$workspaces" | awk '{print $2}')" = workspace ] || fail "RNN temp spaces not all tagged workspace"
weight_spaces=$(category_of b 'cudnnRNNForward')
echo "forward weight spaces: $weight_spaces"
[ "$(echo "$weight_spaces" | awk '{print $2}')" = weights ] || fail "weight space not tagged weights"

if [ "$math" = tf32 ]; then want_compute=77 want_precision=2; else want_compute=68 want_precision=1; fi
wrong=$(q "SELECT count(*) FROM library_calls WHERE name LIKE 'cudnnRNN%' AND compute_type != $want_compute")
[ "$wrong" -eq 0 ] || fail "$wrong RNN calls without compute type $want_compute"
rnn_kernels=$(awk -F'\t' '$1 == "kernel" && $12 ~ /^rnn_/' "$work/truth.tsv" | wc -l)
at_precision=$(awk -F'\t' -v p=$want_precision '$1 == "kernel" && $12 ~ /^rnn_/ && $11 == p' "$work/truth.tsv" | wc -l)
[ "$rnn_kernels" -eq $((3 * micro_batches)) ] || fail "$rnn_kernels RNN kernels in the truth"
[ "$at_precision" -eq "$rnn_kernels" ] || fail "$at_precision of $rnn_kernels RNN kernels at precision $want_precision"

[ "$failures" -eq 0 ] && echo "OK"
exit $((failures > 0))
