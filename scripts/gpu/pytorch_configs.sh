#!/usr/bin/env bash
# The PyTorch sample configurations of the simulated-GPU tests, recorded on the machine's GPU and
# scored against torch.profiler and the script's own labels (score.py --real-gpu), one folder of
# trace and labels per configuration kept, so that the tagger can be studied on real recordings
# afterwards; and a backtrace of a `--metrics flops` recording under cuda-gdb when it is there (a
# real-GPU run once ended that way: the program aborted at exit). Needs no network.
#
#   pytorch_configs.sh BIN_DIR SAMPLES_DIR OUT_DIR PYTHON [CONFIG...]
#
# A CONFIG is NAME:SAMPLE:ALLOCATOR[:SAMPLE OPTIONS, comma-separated]; ALLOCATOR is caching,
# expandable, preset, or caching-off (caching, without torch.profiler: scored against the script's
# notes alone). Without CONFIGs, the list below. Writes OUT_DIR/cfg_NAME/ (run.sqlite, labels,
# score.txt), OUT_DIR/configs.md (one line a configuration) and OUT_DIR/counters_bt.txt.
# TBDPROF_GPU_TOOL_TIMEOUT (120 s) limits each run; TBDPROF_GPU_SIM=1 records on the simulated GPU
# instead (the rehearsal). Exit status: the number of failed runs.
set -uo pipefail
[ $# -ge 4 ] || { echo "usage: pytorch_configs.sh BIN_DIR SAMPLES_DIR OUT_DIR PYTHON [CONFIG...]" >&2; exit 2; }
bin=$1 samples=$2 out=$3 python=$4
shift 4
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(
    mlp_expandable:mlp_train:expandable mlp_preset:mlp_train:preset mlp_off:mlp_train:caching-off
    cnn_expandable:cnn_train:expandable cnn_preset:cnn_train:preset
    cnn_adam:cnn_train:caching:--optimizer,adam cnn_adam_off:cnn_train:caching-off:--optimizer,adam
    cnn_bf16:cnn_train:caching:--bf16 cnn_checkpoint:cnn_train:caching:--checkpoint
    cnn_accumulate:cnn_train:caching:--accumulate,2
    transformer_expandable:transformer_train:expandable transformer_preset:transformer_train:preset
    transformer_off:transformer_train:caching-off)
timeout_s=${TBDPROF_GPU_TOOL_TIMEOUT:-120}
device=(--real-gpu)
[ "${TBDPROF_GPU_SIM:-0}" = 1 ] && device=()
mkdir -p "$out" || exit 2
failures=0
echo "| configuration | sample options | allocator | tbdprof vs torch.profiler (corrected) | tbdprof vs script |" >"$out/configs.md"
echo "|---|---|---|---:|---:|" >>"$out/configs.md"
for config in "${configs[@]}"; do
    IFS=: read -r name sample allocator options <<<"$config"
    IFS=, read -r -a sample_options <<<"${options:-}"
    work="$out/cfg_$name"
    mkdir -p "$work"
    off=()
    [ "$allocator" = caching-off ] && off=(--profiler-off) && allocator=caching
    echo "== $name: $sample ${sample_options[*]} [$allocator${off:+, profiler off}]"
    timeout --kill-after=10 "$timeout_s" "$python" "$samples/oracle/score.py" --python "$python" --tbdprof "$bin/tbdprof" \
        --tag-accuracy "$bin/tbdprof-tag-accuracy" "${device[@]}" --allocator "$allocator" "${off[@]}" --min 0 \
        --json "$work/score.json" --workdir "$work" "$samples/$sample.py" --steps 6 "${sample_options[@]}" \
        >"$work/score.txt" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] || { echo "   FAILED (exit $rc)"; failures=$((failures + 1)); }
    oracle=$(grep -m1 -oE 'vs torch.profiler \(corrected\): [0-9.]+' "$work/score.txt" | grep -oE '[0-9.]+$')
    script=$(grep -m1 -oE 'tbdprof vs (script|the script.s notes)[^:]*: [0-9.]+' "$work/score.txt" | grep -oE '[0-9.]+$')
    echo "   vs torch.profiler ${oracle:--}, vs script ${script:--}"
    echo "| $name | ${sample_options[*]} | $allocator${off:+ (profiler off)} | ${oracle:--} | ${script:--} |" >>"$out/configs.md"
done
if [ ${#device[@]} -gt 0 ] && command -v cuda-gdb >/dev/null && [ -x "$bin/mlp_train" ]; then
    echo "== counters: a --metrics flops recording under cuda-gdb (the child after fork)"
    timeout --kill-after=10 "$timeout_s" cuda-gdb -batch -ex "set follow-fork-mode child" -ex "set pagination off" \
        -ex run -ex "bt 40" -ex "info sharedlibrary" --args "$bin/tbdprof" --metrics flops --force \
        -o "$out/counters_gdb.sqlite" -- "$bin/mlp_train" --iterations 3 --batch 1024 --hidden 1024 --input 1024 \
        >"$out/counters_bt.txt" 2>&1
    grep -E '^#|signal|abort|free' "$out/counters_bt.txt" | head -40
fi
cat "$out/configs.md"
exit "$failures"
