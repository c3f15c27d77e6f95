#!/usr/bin/env bash
# Instructions per kernel launch, counted by callgrind: a figure that a loaded, shared machine does not
# blur, and that splits what the collector adds into its parts.
#
#   bench/collector/count_instructions.sh BUILD_DIR [LAUNCHES]      (needs valgrind)
#
# For the runtime launch loop of tbdprof_bench_target (without the collector, recording with
# TBDPROF_CUPTI=0, recording with CUPTI) it prints, per launch:
#   launch      everything inside the runtime's cudaLaunchKernel (our hook, the driver, CUPTI)
#   added       launch minus the same without the collector
#   push_pop    inside cuptiActivityPush/PopExternalCorrelationId (the simulated CUPTI's code). Since
#               the thread-tagged correlation (raw_format.h, kThreadCorrelationTag) a thread pushes once,
#               so this is ~0 per launch; it stays as a check that no per-launch CUPTI call crept back.
#   cupti_rec   the simulated CUPTI's own work per device record, inside the driver's launch
#   hook        added - push_pop - cupti_rec: the collector's own code
# and, per cudaMalloc of a 24-frame call chain, the instructions with and without the collector.
# Each figure is valgrind's count while inside the named functions (--toggle-collect), so inlining
# cannot blur it. Writer and CUPTI-delivery threads are not in these figures (they run beside the
# application, see run_benchmarks.sh's process CPU column).
set -euo pipefail
# --help: the comment above; an option it does not know: one message, exit 2.
case "${1:-}" in
-h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
-*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac
build=${1:?usage: count_instructions.sh BUILD_DIR [LAUNCHES]}
launches=${2:-20000}
reps=2
total=$((launches * reps + 1))  # + the warm-up launch
allocs=2000
bin=$build/bin
simgpu=$build/lib/simgpu
preload=${PRELOAD:-$build/lib/libtbdprof_preload.so}
work=$(mktemp -d /tmp/tbdprof-callgrind.XXXXXX)
trap 'rm -rf "$work"' EXIT

# count CONFIG FUNCTION_PATTERN...: instructions executed inside the functions, per launch
# (MODE=alloc: per cudaMalloc of the 24-frame allocation loop, ALLOCS of them, 3 times)
count() {
    local config=$1 mode=${MODE:-launch} n=$launches per=$total
    if [ "$mode" = alloc ]; then n=$allocs per=$((allocs * 3)); fi
    shift
    local run_dir=$work/run-$config-$RANDOM toggles=() env=(LD_LIBRARY_PATH="$simgpu")
    mkdir -p "$run_dir"
    case $config in
    cupti_off) env+=(TBDPROF_CUPTI=0 TBDPROF_RUN_DIR="$run_dir" LD_PRELOAD="$preload") ;;
    cupti_on) env+=(TBDPROF_RUN_DIR="$run_dir" LD_PRELOAD="$preload") ;;
    # Capture control, outside the window: the gate closed (cudaProfilerApi, never started), with
    # CUPTI loaded and its kernel activity disabled / without CUPTI; --steps counting launches.
    closed) env+=(TBDPROF_CAPTURE=cudaProfilerApi TBDPROF_RUN_DIR="$run_dir" LD_PRELOAD="$preload") ;;
    closed_nocupti) env+=(TBDPROF_CUPTI=0 TBDPROF_CAPTURE=cudaProfilerApi TBDPROF_RUN_DIR="$run_dir" LD_PRELOAD="$preload") ;;
    counting) env+=(TBDPROF_CAPTURE=steps:900000000:900000001 TBDPROF_RUN_DIR="$run_dir" LD_PRELOAD="$preload") ;;
    esac
    for pattern in "$@"; do toggles+=("--toggle-collect=$pattern"); done
    env "${env[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "${toggles[@]}" \
        "$bin/tbdprof_bench_target" "$mode" "$n" "$([ "$mode" = alloc ] && echo 3 || echo "$reps")" 2>&1 >/dev/null |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | awk -v n="$per" '{ printf "%.0f", $1 / n }'
    # A launch whose record was dropped (full ring: valgrind slows the writer thread down) skips most
    # of the hook, so the count is only valid when every launch reached the trace.
    if [ "$config" != base ] && [ "$mode" = launch ] && [ "${config#closed}" = "$config" ] && [ "$config" != counting ]; then
        "$bin/tbdprof-build-trace" "$run_dir" "$run_dir.sqlite" > /dev/null 2>&1
        local seen
        seen=$(sqlite3 "$run_dir.sqlite" "SELECT COUNT(*) FROM kernels WHERE thread IS NOT NULL" 2>/dev/null || echo 0)
        [ "$seen" = "$total" ] || echo " (only $seen of $total launches recorded: figure too low)" >&2
    fi
    rm -rf "$run_dir" "$run_dir.sqlite"
}

base=$(count base '__cudaLaunchKernel')
if [ "${CAPTURE_ONLY:-0}" = 1 ]; then  # capture control only (docs/benchmarks.md, Capture control)
    for config in closed closed_nocupti counting; do
        n=$(count "$config" '__cudaLaunchKernel')
        echo "$config: $n instructions per launch (base $base, added $((n - base)))"
    done
    exit 0
fi
off=$(count cupti_off '__cudaLaunchKernel')
on=$(count cupti_on '__cudaLaunchKernel')
push_pop=$(count cupti_on 'cuptiActivityPushExternalCorrelationId' 'cuptiActivityPopExternalCorrelationId')
cupti_rec=$(count cupti_on 'tbdsim::cupti::ActivitySession::sink*')
printf '%-10s %8s %8s %8s %9s %8s\n' config launch added push_pop cupti_rec hook
printf '%-10s %8s %8s %8s %9s %8s\n' base "$base" 0 0 0 0
printf '%-10s %8s %8s %8s %9s %8s\n' cupti_off "$off" $((off - base)) 0 0 $((off - base))
printf '%-10s %8s %8s %8s %9s %8s\n' cupti_on "$on" $((on - base)) "$push_pop" "$cupti_rec" $((on - base - push_pop - cupti_rec))

# Allocations: everything inside cudaMalloc (4096 bytes, 24 frames below main), and the part of it
# spent in libunwind's unw_backtrace (the stack) when recording.
alloc_base=$(MODE=alloc count base 'cudaMalloc')
alloc_rec=$(MODE=alloc count cupti_off 'cudaMalloc')
alloc_unwind=$(MODE=alloc count cupti_off 'unw_backtrace' 'backtrace')  # libunwind exports both names
echo "instructions per cudaMalloc: $alloc_base without the collector, $alloc_rec recording (added $((alloc_rec - alloc_base)), of which unw_backtrace $alloc_unwind)"
