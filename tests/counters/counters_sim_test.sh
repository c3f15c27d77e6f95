#!/bin/sh
# `tbdprof --sim --metrics flops` against the simulated GPU's truth (tbdprof_counter_truth_check), each
# sample recorded with and without --metrics: mlp_train (cuBLAS, FP32 and TF32) and cnn_train (cuDNN,
# legacy and backend API).
# Environment: TBD_BUILD_DIR, TBD_CHECK. Exit 77 (skipped) when the samples are not built.
set -u
out=$1
build=$TBD_BUILD_DIR
tbdprof=$build/bin/tbdprof
if [ ! -x "$tbdprof" ] || [ ! -x "$build/bin/mlp_train" ] || [ ! -x "$build/bin/cnn_train" ]; then
    echo "skipped: tbdprof, mlp_train or cnn_train is not built"
    exit 77
fi
rm -rf "$out" && mkdir -p "$out" || exit 1
status=0
for sample in "mlp_train --iterations 3" "mlp_train --iterations 2 --blas-math tf32" "cnn_train --iterations 2" \
              "cnn_train --iterations 1 --math tf32" "cnn_train --iterations 1 --api backend"; do
    name=$(echo "$sample" | tr -c 'a-zA-Z0-9\n' '_')
    echo "== $name"
    # shellcheck disable=SC2086
    if ! TBDSIM_TRUTH="$out/$name.truth" "$tbdprof" --sim --metrics flops -o "$out/$name.sqlite" -- \
            "$build/bin/"$sample >"$out/$name.record.log" 2>&1; then
        echo "recording $name with --metrics failed:"; cat "$out/$name.record.log"; status=1; continue
    fi
    # shellcheck disable=SC2086
    if ! "$tbdprof" --sim -o "$out/$name.baseline.sqlite" -- "$build/bin/"$sample >"$out/$name.baseline.log" 2>&1; then
        echo "recording $name failed:"; cat "$out/$name.baseline.log"; status=1; continue
    fi
    "$TBD_CHECK" "$out/$name.sqlite" "$out/$name.truth" "$out/$name.baseline.sqlite" || status=1
done
# cuRAND, cuFFT and cuSPARSE kernels outside any recorded library call: their counter FLOPs are the figure.
if [ -n "${TBD_LIBS_PROGRAM:-}" ] && [ -x "$TBD_LIBS_PROGRAM" ]; then
    echo "== libs_program"
    if TBDSIM_TRUTH="$out/libs.truth" "$tbdprof" --sim --metrics flops -o "$out/libs.sqlite" -- \
            "$TBD_LIBS_PROGRAM" "$TBD_TOOLKIT_DIR" >"$out/libs.record.log" 2>&1 &&
       "$tbdprof" --sim -o "$out/libs.baseline.sqlite" -- "$TBD_LIBS_PROGRAM" "$TBD_TOOLKIT_DIR" \
            >"$out/libs.baseline.log" 2>&1; then
        "$TBD_CHECK" "$out/libs.sqlite" "$out/libs.truth" "$out/libs.baseline.sqlite" || status=1
    else
        echo "recording libs_program failed:"; cat "$out/libs.record.log" "$out/libs.baseline.log"; status=1
    fi
fi
# TBDPROF_CUPTI=0 (leave CUPTI alone) wins over --metrics: the program runs, one line says so, no rows.
if ! TBDPROF_CUPTI=0 "$tbdprof" --sim --metrics flops -o "$out/nocupti.sqlite" -- "$build/bin/mlp_train" --iterations 2 \
        >"$out/nocupti.log" 2>&1; then
    echo "TBDPROF_CUPTI=0 --metrics: recording failed"; cat "$out/nocupti.log"; status=1
elif ! grep -q "recording without hardware counters" "$out/nocupti.log" ||
     [ "$(sqlite3 "$out/nocupti.sqlite" 'SELECT count(*) FROM kernel_metrics')" != 0 ]; then
    echo "TBDPROF_CUPTI=0 --metrics: expected the note and no kernel_metrics rows"; cat "$out/nocupti.log"; status=1
fi
# A metric set tbdprof does not know is a usage error, and nothing is run.
"$tbdprof" --sim --metrics bogus -o "$out/bogus.sqlite" -- "$build/bin/mlp_train" >"$out/bogus.log" 2>&1
rc=$?
if [ $rc -ne 2 ] || [ -e "$out/bogus.sqlite" ]; then echo "--metrics bogus: exit $rc, expected 2 and no trace"; status=1; fi
exit $status
