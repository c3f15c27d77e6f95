#!/usr/bin/env bash
# A short check of the collector against the real CUPTI (under 90 s on an H200): run inside the bundle
# made by scripts/gpu/bundle.sh, after the fixes for the first real run (docs/real-gpu.md):
#   - hello_copy and mlp_train --iterations 50 recorded plainly: every device record must be joined
#     to its host call through CUPTI's correlation (no "lost their correlation record" note);
#   - mlp_train with --metrics flops, as run_on_gpu.sh records it: the program must exit normally
#     (the first run aborted at exit) and the counter FLOPs must match the cuBLAS calls.
# Prints each run's exit status and notes, and the counter check. Results in ${OUT:-cupti-out}/.
#   cupti_check.sh              on the real GPU
#   cupti_check.sh --rehearse   the same on the simulated GPU (tests run it so)
# Exit status: 0 all good; 1 a run aborted, timed out or failed; 3 every run exited normally but a
# check did not hold (correlations lost, kernels without device times, counter FLOPs off).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sim=()
case "${1:-}" in
    --rehearse) sim=(--sim) ;;
    "") ;;
    *) echo "usage: cupti_check.sh [--rehearse]" >&2; exit 2 ;;
esac
[ -x "$here/bin/tbdprof" ] || { echo "cupti_check.sh runs inside a bundle (scripts/gpu/bundle.sh)" >&2; exit 2; }
B="$here/bin"
out=$(realpath -m "${OUT:-cupti-out}")
mkdir -p "$out" || exit 1
exec > >(tee "$out/cupti_check.log") 2>&1

if [ ${#sim[@]} -eq 0 ] && ldd "$B/mlp_train" | grep -q "not found"; then
    # As run_on_gpu.sh: CUDA 13's runtime and cuBLAS from the toolkit or PyTorch's nvidia-* wheels.
    # shellcheck disable=SC2038,SC2046  # paths without spaces; the site folders are meant to split
    extra=$(find /usr/local/cuda*/lib* /usr/lib/x86_64-linux-gnu \
                 $(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null) \
                 -name 'libcublas.so.13' -o -name 'libcudart.so.13' 2>/dev/null | xargs -r -n1 dirname | sort -u | paste -sd:)
    export LD_LIBRARY_PATH="${extra}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

aborted=0
checks_failed=0
record() {  # name, tbdprof options..., --, program...
    local name=$1; shift
    echo "== $name"
    local start rc
    start=$(date +%s%N)
    timeout --kill-after=5 "${TBDPROF_CUPTI_CHECK_TIMEOUT:-40}" "$B/tbdprof" "${sim[@]}" --force \
        -o "$out/$name.sqlite" "$@" >"$out/$name.log" 2>&1
    rc=$?
    echo "   exit $rc, $(( ($(date +%s%N) - start) / 1000000 )) ms"
    # The notes that tell whether the join and the device times held, and any abort.
    grep -E "note:|warning|crashed|invalid pointer|abort|hardware counters|device records|timestamps" "$out/$name.log" \
        | sed 's/^/   /'
    if [ "$rc" -ne 0 ] || grep -qE "crashed with signal|free\(\)|double free|corrupted" "$out/$name.log"; then
        echo "   FAIL: $name did not exit normally"; aborted=$((aborted + 1)); return 1
    fi
    if grep -qE "lost their correlation record|have no device record" "$out/$name.log"; then
        echo "   FAIL: device records not joined by correlation"; checks_failed=$((checks_failed + 1))
    else
        echo "   correlation: every device record joined"
    fi
    return 0
}

check_kernel=(--check-kernel)
[ ${#sim[@]} -gt 0 ] && check_kernel=()  # the simulated GPU does not execute kernels
record hello_copy -- "$B/hello_copy" "${check_kernel[@]}"
record mlp_train_50 -- "$B/mlp_train" --iterations 50
if record counters --metrics flops -- "$B/mlp_train" --iterations 3 --batch 1024 --hidden 1024 --input 1024; then
    "$B/tbdprof" report "$out/counters.sqlite" --format json -o "$out/counters.report.json" 2>/dev/null
    if python3 "$here/check_counter_flops.py" "$out/counters.report.json" 0.01 >"$out/counters.check.txt" 2>&1; then
        sed 's/^/   /' "$out/counters.check.txt"
    else
        sed 's/^/   /' "$out/counters.check.txt"
        echo "   FAIL: counter FLOPs check"; checks_failed=$((checks_failed + 1))
    fi
fi
echo "== done: $aborted run(s) aborted or failed, $checks_failed check(s) failed; results in $out"
[ "$aborted" -eq 0 ] || exit 1
[ "$checks_failed" -eq 0 ] || exit 3
exit 0
