#!/usr/bin/env bash
# The real-GPU check: run once on a machine with an NVIDIA GPU (the `device` machine when lent).
# Builds tbdprof, runs the samples with and without tbdprof on the real GPU, a PyTorch loop under
# tbdprof --framework=pytorch, and writes everything (logs, traces, reports) to ${OUT:-gpu-out}/.
# Record what it showed in docs/real-gpu.md.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-out}
mkdir -p "$out"
exec > >(tee "$out/run.log") 2>&1
echo "== machine"; nvidia-smi || true; nvcc --version | tail -2
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_COMPILER="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" >/dev/null \
    && cmake --build build-gpu -j "$(nproc)" --target tbdprof mlp_train lstm_train attention_train hello_copy tbdprof-tag-accuracy \
    || { echo "BUILD FAILED"; exit 1; }
B=build-gpu/bin
run() {  # name, command...
    local name=$1; shift
    echo "== $name: $*"
    local start=$(date +%s.%N)
    "$@" >"$out/$name.log" 2>&1; local rc=$?
    echo "   exit $rc, $(echo "$(date +%s.%N) - $start" | bc) s"; tail -3 "$out/$name.log"
}
run hello_plain $B/hello_copy --check-kernel
run mlp_plain $B/mlp_train --iterations 50
for s in "mlp_train --iterations 50" "mlp_train --iterations 20 --optimizer adam --grad transient --alloc async" \
         "lstm_train --iterations 10" "attention_train --iterations 10 --accumulate 2"; do
    name=$(echo "$s" | tr ' ' '_' | tr -d '-')
    TBD_SAMPLE_LABELS="$out/$name.labels" run "rec_$name" $B/tbdprof --force -o "$out/$name.sqlite" -- $B/$s
    $B/tbdprof report "$out/$name.sqlite" >"$out/$name.report.txt" 2>&1
    $B/tbdprof report "$out/$name.sqlite" --format json -o "$out/$name.report.json" 2>/dev/null
    $B/tbdprof-tag-accuracy "$out/$name.sqlite" "$out/$name.labels" | tee "$out/$name.accuracy.txt"
done
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    run torch_plain python3 scripts/gpu/torch_loop.py 30
    run torch_recorded $B/tbdprof --force --framework=pytorch -o "$out/torch.sqlite" -- python3 scripts/gpu/torch_loop.py 30
    run torch_recorded_pooled $B/tbdprof --force -o "$out/torch_pooled.sqlite" -- python3 scripts/gpu/torch_loop.py 30
    for t in torch torch_pooled; do $B/tbdprof report "$out/$t.sqlite" >"$out/$t.report.txt" 2>&1; done
else
    echo "PyTorch with CUDA not available: skipped"
fi
echo "== done; results in $out"
