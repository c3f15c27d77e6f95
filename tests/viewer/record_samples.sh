#!/bin/sh
# Records the viewer tests' sample traces on the simulated GPU: mlp.sqlite (mlp_train --iterations 6)
# and mlp_adam_nvtx.sqlite (Adam, NVTX step/phase ranges), for the screenshot, views and window tests.
#   record_samples.sh BUILD_DIR OUT_DIR      exit 77 (skipped) when tbdprof or mlp_train is not built
set -u
build=$1
out=$2
if [ ! -x "$build/bin/tbdprof" ] || [ ! -x "$build/bin/mlp_train" ]; then
    echo "skipped: $build/bin/tbdprof or $build/bin/mlp_train is not built"
    exit 77
fi
rm -rf "$out" && mkdir -p "$out" || exit 1
record() {
    name=$1
    shift
    if ! "$build/bin/tbdprof" --sim -o "$out/$name.sqlite" -- "$build/bin/mlp_train" "$@" >"$out/$name.log" 2>&1; then
        echo "recording $name failed:"
        cat "$out/$name.log"
        exit 1
    fi
}
record mlp --iterations 6
record mlp_adam_nvtx --iterations 6 --optimizer adam --nvtx
echo "recorded $out/mlp.sqlite and $out/mlp_adam_nvtx.sqlite"
