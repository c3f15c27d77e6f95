#!/usr/bin/env bash
# Capture control benchmark (docs/benchmarks.md, "Capture control"): not a test, asserts nothing.
#  1. A long run recorded in a window: profiler_window --no-marks --persistent --steps STEPS (a step:
#     2 launches, a copy, a set; no NVTX, so --steps counts launches) without tbdprof, and with
#     `tbdprof --sim --steps 100:110`; the trace's size and rows, against a full recording of the
#     same program run for 11 steps.
#  2. What a launch costs outside the window: tbdprof_bench_target launch N REPS (thread CPU time per
#     launch, each process's minimum over its repetitions, first dropped; median over RUNS
#     processes) without the collector, recording everything with CUPTI, and with capture control
#     whose window never opens (cudaProfilerApi: the gate is closed) or is far ahead (--steps
#     counting launches: one comparison per launch after the first 512).
#
#   bench/collector/run_capture_benchmark.sh [BUILD_DIR]    Environment: STEPS (default 1000000),
#   RUNS (default 5), LAUNCHES (default 100000), REPS (default 5), WORK (kept scratch directory).
set -euo pipefail
# --help: the comment above; an option it does not know: one message, exit 2.
case "${1:-}" in
-h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
-*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
steps=${STEPS:-1000000}
runs=${RUNS:-5}
launches=${LAUNCHES:-100000}
reps=${REPS:-5}
bin=$build/bin
simgpu=$build/lib/simgpu
preload=$build/lib/libtbdprof_preload.so
work=${WORK:-$(mktemp -d /tmp/tbdprof-capture-bench.XXXXXX)}
mkdir -p "$work"
[ -n "${WORK:-}" ] || trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
rows() { sqlite3 "$1" "SELECT (SELECT count(*) FROM kernels) || ' kernels, ' || (SELECT count(*) FROM copies) || ' copies, ' || (SELECT count(*) FROM sets) || ' sets, ' || (SELECT count(*) FROM allocations) || ' allocations, ' || (SELECT count(*) FROM capture_windows) || ' window(s)'"; }
size() { stat -c %s "$1"; }

echo "== 1. $steps steps, --steps 100:110"
program=("$bin/profiler_window" --no-marks --persistent)
t0=$(now)
LD_LIBRARY_PATH=$simgpu "${program[@]}" --steps "$steps" > /dev/null
t1=$(now)
"$bin/tbdprof" --sim -o "$work/window.sqlite" --force --steps 100:110 -- "${program[@]}" --steps "$steps" > /dev/null 2>&1
t2=$(now)
"$bin/tbdprof" --sim -o "$work/eleven.sqlite" --force -- "${program[@]}" --steps 11 > /dev/null 2>&1
printf 'without tbdprof: %.2f s; recorded with --steps 100:110: %.2f s (building the trace included)\n' \
    "$(echo "$t1 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)"
echo "window trace: $(size "$work/window.sqlite") bytes: $(rows "$work/window.sqlite")"
echo "  $(sqlite3 "$work/window.sqlite" "SELECT 'window ' || reason || ': ' || round((end_ns - begin_ns) / 1e6, 3) || ' ms' FROM capture_windows")"
echo "11 steps recorded in full: $(size "$work/eleven.sqlite") bytes: $(rows "$work/eleven.sqlite")"

echo "== 2. thread CPU ns per runtime launch ($launches launches x $reps reps, median of $runs processes)"
min_of() { awk '$1 != "rep=0" { for (i = 1; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == "thread_cpu_ns" && (m == "" || kv[2] < m)) m = kv[2] } } END { print m }' "$1"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
declare -A values
configs=(base full closed closed_nocupti counting)
for ((r = 0; r < runs; ++r)); do
    for config in "${configs[@]}"; do
        out=$work/$config-$r.txt run_dir=$work/run-$config && rm -rf "$run_dir" && mkdir -p "$run_dir"
        case $config in
        base) LD_LIBRARY_PATH=$simgpu "$bin/tbdprof_bench_target" launch "$launches" "$reps" > "$out" ;;
        full) TBDPROF_RUN_DIR=$run_dir LD_LIBRARY_PATH=$simgpu LD_PRELOAD=$preload \
            "$bin/tbdprof_bench_target" launch "$launches" "$reps" > "$out" ;;
        closed) TBDPROF_CAPTURE=cudaProfilerApi TBDPROF_RUN_DIR=$run_dir LD_LIBRARY_PATH=$simgpu LD_PRELOAD=$preload \
            "$bin/tbdprof_bench_target" launch "$launches" "$reps" > "$out" ;;
        closed_nocupti) TBDPROF_CUPTI=0 TBDPROF_CAPTURE=cudaProfilerApi TBDPROF_RUN_DIR=$run_dir LD_LIBRARY_PATH=$simgpu \
            LD_PRELOAD=$preload "$bin/tbdprof_bench_target" launch "$launches" "$reps" > "$out" ;;
        counting) TBDPROF_CAPTURE=steps:900000000:900000001 TBDPROF_RUN_DIR=$run_dir LD_LIBRARY_PATH=$simgpu \
            LD_PRELOAD=$preload "$bin/tbdprof_bench_target" launch "$launches" "$reps" > "$out" ;;
        esac
        values[$config]+="$(min_of "$out") "
    done
done
base=$(echo "${values[base]}" | tr ' ' '\n' | grep . | median)
for config in "${configs[@]}"; do
    m=$(echo "${values[$config]}" | tr ' ' '\n' | grep . | median)
    printf '%-9s %8.1f ns  (%+.1f ns)\n' "$config" "$m" "$(echo "$m - $base" | bc)"
done
echo "(closed: a raw file is still written for the allocations: $(ls -s "$work/run-closed" | head -1))"
