#!/usr/bin/env bash
# The real-GPU check: run once on a machine with an NVIDIA GPU (the `device` machine when lent).
# Runs the samples with and without tbdprof on the real GPU, a PyTorch loop under
# tbdprof --framework=pytorch, the PyTorch samples scored against torch.profiler with their overhead
# side by side (pytorch_samples.sh), and writes everything (logs, traces, reports, the table
# pytorch_figures.md) to ${OUT:-gpu-out}/.
# Record what it showed in docs/real-gpu.md.
#
# Two layouts: inside a bundle made by scripts/gpu/bundle.sh (bin/ beside this script: nothing is
# built), or in a source checkout (builds build-gpu/ first, which needs our -dev packages).
#   run_on_gpu.sh              the real check
#   run_on_gpu.sh --rehearse   every step on the simulated GPU (no GPU, no PyTorch): proves the
#                              bundle runs where it is unpacked; with TBDPROF_GPU_REHEARSE_TORCH set (a
#                              python with torch) the PyTorch samples run too, on the simulated GPU
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rehearse=0
case "${1:-}" in
    --rehearse) rehearse=1 ;;
    "") ;;
    *) echo "usage: run_on_gpu.sh [--rehearse]" >&2; exit 2 ;;
esac
out=$(realpath -m "${OUT:-gpu-out}")
mkdir -p "$out" || exit 1
exec > >(tee "$out/run.log") 2>&1
# tee runs beside the script: at exit, close its input and wait for it, so that the log is whole
# when the script returns (a caller reading the log at once found its last lines missing).
tee_pid=$!
trap 'exec >&- 2>&-; wait "$tee_pid"' EXIT

if [ -x "$here/bin/tbdprof" ]; then
    B="$here/bin"
    torch_samples="$here/pytorch"
else
    torch_samples="$here/../../samples/pytorch"
    cd "$here/../.." || exit 1
    cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_COMPILER="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" >/dev/null \
        && cmake --build build-gpu -j "$(nproc)" --target tbdprof mlp_train lstm_train attention_train hello_copy tbdprof-tag-accuracy \
        || { echo "BUILD FAILED"; exit 1; }
    B="$PWD/build-gpu/bin"
fi
[ -f "$here/MANIFEST.txt" ] && cat "$here/MANIFEST.txt"

echo "== machine"
if [ "$rehearse" = 1 ]; then
    echo "rehearsal: simulated GPU"
    sim=(--sim)
    # Plain runs of the samples use the simulated libraries the bundle carries.
    plain_env=(env "LD_LIBRARY_PATH=$B/../lib/tbdprof/simgpu")
else
    nvidia-smi || echo "nvidia-smi: not available"
    command -v nvcc >/dev/null && nvcc --version | tail -2
    sim=()
    plain_env=(env)
    # The samples look for CUDA 13's runtime and cuBLAS in /usr/local/cuda/lib; elsewhere (the
    # nvidia-* Python wheels PyTorch brings) add their folders.
    if ldd "$B/mlp_train" | grep -q "not found"; then
        extra=$(find /usr/local/cuda*/lib* /usr/lib/x86_64-linux-gnu \
                     $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null) \
                     -name 'libcublas.so.13' -o -name 'libcudart.so.13' -o -name 'libcudnn.so.9' 2>/dev/null | xargs -r -n1 dirname | sort -u | paste -sd:)
        echo "CUDA libraries from: ${extra:-nowhere found}"
        export LD_LIBRARY_PATH="${extra}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
fi

failures=0
# Each step runs under a time limit (seconds; TBDPROF_GPU_STEP_TIMEOUT), so that one step that hangs on
# a real driver costs its limit, not the rest of a short lease; exit 124 in the log means it ran out.
step_timeout=${TBDPROF_GPU_STEP_TIMEOUT:-150}
run() {  # name, command...
    local name=$1; shift
    echo "== $name: $*"
    local start rc
    start=$(date +%s%N)
    timeout --kill-after=10 "$step_timeout" "$@" >"$out/$name.log" 2>&1; rc=$?
    echo "   exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms"; tail -3 "$out/$name.log"
    [ "$rc" -eq 0 ] || failures=$((failures + 1))
    return "$rc"
}
# The simulated GPU does not execute kernels, so only the real run checks the kernel's results.
check_kernel=(--check-kernel)
[ "$rehearse" = 1 ] && check_kernel=()
run hello_plain "${plain_env[@]}" "$B/hello_copy" "${check_kernel[@]}"
run mlp_plain "${plain_env[@]}" "$B/mlp_train" --iterations 50
for s in "mlp_train --iterations 50" "mlp_train --iterations 20 --optimizer adam --grad transient --alloc async" \
         "lstm_train --iterations 10" "attention_train --iterations 10 --accumulate 2"; do
    name=$(echo "$s" | tr ' ' '_' | tr -d '-')
    # shellcheck disable=SC2086
    TBD_SAMPLE_LABELS="$out/$name.labels" run "rec_$name" "$B/tbdprof" "${sim[@]}" --force -o "$out/$name.sqlite" -- $B/$s \
        || continue
    run "report_$name" "$B/tbdprof" report "$out/$name.sqlite" && cp "$out/report_$name.log" "$out/$name.report.txt"
    "$B/tbdprof" report "$out/$name.sqlite" --format json -o "$out/$name.report.json" 2>/dev/null
    "$B/tbdprof-tag-accuracy" "$out/$name.sqlite" "$out/$name.labels" | tee "$out/$name.accuracy.txt"
done
# Hardware counters: cuBLAS SGEMMs (mlp_train, FP32 default math) recorded with --metrics flops; their
# counter FLOPs must equal the calls' 2mnk within 1%. Shapes with k >= 1024 keep the epilogue's
# m*n-order work (alpha, beta) under 0.1% of 2mnk.
counters_sample="mlp_train --iterations 3 --batch 1024 --hidden 1024 --input 1024"
# shellcheck disable=SC2086
if run rec_counters "$B/tbdprof" "${sim[@]}" --metrics flops --force -o "$out/counters.sqlite" -- $B/$counters_sample; then
    "$B/tbdprof" report "$out/counters.sqlite" >"$out/counters.report.txt" 2>&1
    "$B/tbdprof" report "$out/counters.sqlite" --format json -o "$out/counters.report.json" 2>/dev/null
    grep -E "hardware counters|both sources|sources:" "$out/counters.report.txt"
    if command -v python3 >/dev/null; then
        python3 "$here/check_counter_flops.py" "$out/counters.report.json" 0.01 | tee "$out/counters.check.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || failures=$((failures + 1))
    else
        echo "FAIL: python3 is needed to read the counter report"; failures=$((failures + 1))
    fi
fi
if [ "$rehearse" = 1 ]; then
    echo "PyTorch steps: skipped in the rehearsal"
elif python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    run torch_plain python3 "$here/torch_loop.py" 30
    run torch_recorded "$B/tbdprof" --force --framework=pytorch -o "$out/torch.sqlite" -- python3 "$here/torch_loop.py" 30
    run torch_recorded_pooled "$B/tbdprof" --force -o "$out/torch_pooled.sqlite" -- python3 "$here/torch_loop.py" 30
    for t in torch torch_pooled; do "$B/tbdprof" report "$out/$t.sqlite" >"$out/$t.report.txt" 2>&1; done
    step_timeout=${TBDPROF_GPU_TORCH_TIMEOUT:-900} run torch_samples bash "$here/pytorch_samples.sh" "$B" "$torch_samples" "$out" python3
    cat "$out/torch_samples.log"
else
    echo "PyTorch with CUDA not available: skipped"
fi
if [ "$rehearse" = 1 ] && [ -n "${TBDPROF_GPU_REHEARSE_TORCH:-}" ]; then
    step_timeout=${TBDPROF_GPU_TORCH_TIMEOUT:-900} run torch_samples_sim bash "$here/pytorch_samples.sh" "$B" "$torch_samples" "$out" "$TBDPROF_GPU_REHEARSE_TORCH" --sim
    cat "$out/torch_samples_sim.log"
fi
echo "== done: $failures failed step(s); results in $out"
[ "$failures" -eq 0 ]
