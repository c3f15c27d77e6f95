#!/usr/bin/env bash
# `cmake --install` into a temporary prefix gives a tbdprof that finds its collector and the
# simulated GPU relative to itself, and records.
source "$(dirname "$0")/common.sh"
build_dir=$1
prefix="$WORK/prefix"
cmake --install "$build_dir" --component tbdprof --prefix "$prefix" >"$WORK/install.log" 2>&1 \
    || { cat "$WORK/install.log"; fail "cmake --install failed"; finish; }
for f in bin/tbdprof lib/tbdprof/libtbdprof_preload.so lib/tbdprof/simgpu/libcuda.so.1 lib/tbdprof/simgpu/libcudart.so.13; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
done
cd "$WORK" || exit 1
expect_status 0 "installed tbdprof --version" -- "$prefix/bin/tbdprof" --version
TBDSIM_TRUTH="$WORK/truth.tsv" "$prefix/bin/tbdprof" --sim -o "$WORK/t.sqlite" -- "$TBDPROF_BIN_DIR/hello_copy" \
    >"$WORK/out" 2>"$WORK/err" || fail "installed tbdprof could not record: $(cat "$WORK/err")"
"$TRACE_VS_TRUTH" "$WORK/t.sqlite" "$WORK/truth.tsv" || fail "installed tbdprof's trace differs from the truth"
finish
