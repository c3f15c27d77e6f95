#!/usr/bin/env bash
# The PyTorch samples (samples/pytorch) on the machine's GPU, as the simulated-GPU tests run them:
# each sample recorded under tbdprof with torch.profiler's labels and scored against them (score.py:
# tag agreement, what PyTorch cannot see), the report's "Memory the framework cannot see", and the
# time per step plain, under tbdprof and under torch.profiler (overhead.py). Called by
# run_on_gpu.sh; needs no network.
#
#   pytorch_samples.sh BIN_DIR SAMPLES_DIR OUT_DIR PYTHON [--sim]
#
# BIN_DIR holds tbdprof and tbdprof-tag-accuracy; SAMPLES_DIR the samples and oracle/; PYTHON imports
# torch. --sim runs the same steps on the simulated GPU (the rehearsal, and a check on a machine
# without a GPU). TBDPROF_GPU_TORCH_STEPS (6), TBDPROF_GPU_TORCH_REPEAT (3) and
# TBDPROF_GPU_TORCH_SAMPLES ("mlp_train cnn_train transformer_train") change what runs,
# TBDPROF_GPU_TORCH_TOOL_TIMEOUT (240 s) how long one score.py or overhead.py run may take. Writes per sample score_NAME.json, score_NAME.txt, NAME.report.json,
# overhead_NAME.json and the table pytorch_figures.md; exit status: the number of failed steps.
set -uo pipefail
[ $# -ge 4 ] && [ $# -le 5 ] || { echo "usage: pytorch_samples.sh BIN_DIR SAMPLES_DIR OUT_DIR PYTHON [--sim]" >&2; exit 2; }
bin=$1 samples=$2 out=$3 python=$4
real=(--real-gpu)
case "${5:-}" in
    --sim) real=() ;;
    "") ;;
    *) echo "pytorch_samples.sh: unknown option $5" >&2; exit 2 ;;
esac
steps=${TBDPROF_GPU_TORCH_STEPS:-6}
repeat=${TBDPROF_GPU_TORCH_REPEAT:-3}
read -r -a torch_samples <<<"${TBDPROF_GPU_TORCH_SAMPLES:-mlp_train cnn_train transformer_train}"
mkdir -p "$out" || exit 2
for f in "$bin/tbdprof" "$bin/tbdprof-tag-accuracy" "$samples/oracle/score.py" "$samples/oracle/overhead.py"; do
    [ -e "$f" ] || { echo "pytorch_samples.sh: missing $f" >&2; exit 2; }
done

failures=0
# Each tool run has a time limit (seconds), so that one that hangs leaves time for the others.
tool_timeout=${TBDPROF_GPU_TORCH_TOOL_TIMEOUT:-240}
for sample in "${torch_samples[@]}"; do
    work="$out/torch_$sample"
    mkdir -p "$work"
    echo "== $sample: score.py (${real[*]:-simulated GPU}, $steps steps)"
    timeout --kill-after=10 "$tool_timeout" "$python" "$samples/oracle/score.py" --python "$python" --tbdprof "$bin/tbdprof" \
        --tag-accuracy "$bin/tbdprof-tag-accuracy" "${real[@]}" --allocator caching --min 0 \
        --json "$out/score_$sample.json" --workdir "$work" "$samples/$sample.py" --steps "$steps" \
        >"$out/score_$sample.txt" 2>&1
    rc=$?
    tail -8 "$out/score_$sample.txt"
    if [ "$rc" -ne 0 ]; then
        echo "   FAILED (exit $rc)"; failures=$((failures + 1))
    else
        "$bin/tbdprof" report "$work/run.sqlite" --format json -q -o "$out/$sample.report.json" --force ||
            failures=$((failures + 1))
        "$bin/tbdprof" report "$work/run.sqlite" -q >"$out/$sample.report.txt" 2>&1
    fi
    echo "== $sample: overhead.py (repeat $repeat)"
    timeout --kill-after=10 "$tool_timeout" "$python" "$samples/oracle/overhead.py" --python "$python" --tbdprof "$bin/tbdprof" "${real[@]}" \
        --repeat "$repeat" --workdir "$work/overhead" --json "$out/overhead_$sample.json" \
        "$samples/$sample.py" --steps "$steps" 2>&1 | tee "$out/overhead_$sample.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
done
"$python" "$(dirname "$0")/pytorch_figures.py" "$out" >"$out/pytorch_figures.md" || failures=$((failures + 1))
cat "$out/pytorch_figures.md"
exit "$failures"
