#!/bin/sh
# Records the viewer tests' sample traces on the simulated GPU: mlp.sqlite (mlp_train --iterations 6)
# mlp_adam_nvtx.sqlite (Adam, NVTX step/phase ranges), gpt_arena.sqlite (pooled segments) and graph.sqlite
# (graph_replay) and dp_train.sqlite (2 ranks, NCCL), for the screenshot, views and window tests.
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
    program=$2
    shift 2
    if ! "$build/bin/tbdprof" --sim -o "$out/$name.sqlite" -- "$build/bin/$program" "$@" >"$out/$name.log" 2>&1; then
        echo "recording $name failed:"
        cat "$out/$name.log"
        exit 1
    fi
}
record mlp mlp_train --iterations 6
record mlp_adam_nvtx mlp_train --iterations 6 --optimizer adam --nvtx
# A caching arena (pooled segments with tensors recovered by tagging), for the memory view's sub-ranges.
if [ -x "$build/bin/gpt_arena_train" ]; then record gpt_arena gpt_arena_train --iterations 4; fi
# CUDA graph replays, for the timeline's replay marks (when the sample is built).
if [ -x "$build/bin/graph_replay" ]; then record graph graph_replay --replays 4; fi
# Two ranks with NCCL all-reduces overlapping backward, for the timeline's communication lanes.
if [ -x "$build/bin/dp_train" ]; then record dp_train dp_train --ranks 2 --iterations 4; fi
echo "recorded $out/mlp.sqlite and $out/mlp_adam_nvtx.sqlite"
