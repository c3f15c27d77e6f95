#!/bin/sh
# Records sample training programs on the simulated GPU with `tbdprof --sim` and TBDSIM_TRUTH, then
# checks the analyzer against the ground truth (tbdprof_analyzer_truth_check): utilization within
# 0.1 percentage points, FP32 FLOPs exact, peak memory exact. Also checks that a truncated copy of
# the recorded trace is refused with exit status 2.
# Environment: TBD_BUILD_DIR, TBD_ANALYZE, TBD_TRUTH_CHECK. Exit 77 (skipped) when the build has no
# `tbdprof` or samples yet.
set -u
out=$1
build=$TBD_BUILD_DIR
tbdprof=$build/bin/tbdprof
if [ ! -x "$tbdprof" ] || [ ! -x "$build/bin/mlp_train" ]; then
    echo "skipped: $tbdprof or $build/bin/mlp_train is not built"
    exit 77
fi
rm -rf "$out" && mkdir -p "$out" || exit 1
status=0
# The TF32 runs: every GEMM under CUBLAS_TF32_TENSOR_OP_MATH, and only the batched *Ex GEMMs through
# CUBLAS_COMPUTE_32F_FAST_TF32 (SGEMMs stay FP32): the precision split must be exact.
for sample in "mlp_train --iterations 6" "lstm_train --iterations 3" "mlp_train --iterations 3 --blas-math tf32" \
              "attention_train --iterations 2 --blas-math fast-tf32" \
              "cnn_train --iterations 3 --math tf32" "cnn_train --iterations 2 --batch-norm ex-relu" \
              "lstm_cudnn_train --iterations 3 --math tf32"; do
    name=$(echo "$sample" | tr -c 'a-zA-Z0-9\n' '_')
    program=${sample%% *}
    [ -x "$build/bin/$program" ] || continue
    # shellcheck disable=SC2086
    if ! TBDSIM_TRUTH="$out/$name.truth" "$tbdprof" --sim -o "$out/$name.sqlite" -- "$build/bin/"$sample \
            >"$out/$name.record.log" 2>&1; then
        echo "recording $name failed:"; cat "$out/$name.record.log"
        status=1; continue
    fi
    echo "== $name"
    "$TBD_TRUTH_CHECK" "$out/$name.sqlite" "$out/$name.truth" || status=1
    "$TBD_ANALYZE" report "$out/$name.sqlite" --format json -o "$out/$name.json" || status=1
    size=$(wc -c <"$out/$name.sqlite")
    head -c $((size / 2)) "$out/$name.sqlite" >"$out/$name.truncated.sqlite"
    "$TBD_ANALYZE" report "$out/$name.truncated.sqlite" >"$out/$name.truncated.log" 2>&1
    rc=$?
    if [ $rc -ne 2 ]; then echo "truncated $name: exit $rc, expected 2"; cat "$out/$name.truncated.log"; status=1; fi
done
exit $status
