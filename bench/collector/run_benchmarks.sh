#!/usr/bin/env bash
# The collector benchmark: builds what it needs, measures on this machine, prints a table against the
# recording-side targets (docs/benchmarks.md). Not a test: it asserts nothing (timings on a shared machine vary).
#
#   bench/collector/run_benchmarks.sh [BUILD_DIR]        (default: build)
#
# Environment: RUNS (processes per configuration, default 5), LAUNCHES (per repetition, default
# 100000), REPS (repetitions per process, default 5), ALLOCS (default 2000), SKIP_BUILD=1,
# SKIP_CALLGRIND=1, WORK (scratch directory, default a fresh one under /tmp, removed at the end),
# PRELOAD and WRITER_BENCH (another build's collector and writer benchmark, to compare versions).
set -euo pipefail
# --help: the comment above; an option it does not know: one message, exit 2.
case "${1:-}" in
-h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
-*) echo "$(basename "$0"): unknown option $1 (see --help)" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build}" 2>/dev/null && pwd || echo "${1:-$root/build}")
runs=${RUNS:-5}
launches=${LAUNCHES:-100000}
reps=${REPS:-5}
allocs=${ALLOCS:-2000}

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    [ -f "$build/CMakeCache.txt" ] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
    cmake --build "$build" -j"$(nproc)" --target tbdprof_preload simgpu_driver simgpu_cudart tbdsim_cublas tbdsim_cupti \
        mlp_train tbdprof-build-trace tbdprof_writer_bench tbdprof_bench_target > /dev/null
fi
bin=$build/bin
preload=${PRELOAD:-$build/lib/libtbdprof_preload.so}
writer_bench=${WRITER_BENCH:-$bin/tbdprof_writer_bench}
simgpu=$build/lib/simgpu
work=${WORK:-$(mktemp -d /tmp/tbdprof-bench.XXXXXX)}
mkdir -p "$work"
[ -n "${WORK:-}" ] || trap 'rm -rf "$work"' EXIT

# median of numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# field=value from the lines of op $2 in file $1: the minimum over the repetitions (first one dropped)
min_field() { awk -v op="$2" -v f="$3" '$0 ~ "op=" op " " && $1 != "rep=0" { for (i = 1; i <= NF; ++i) { split($i, kv, "="); if (kv[1] == f && (m == "" || kv[2] < m)) m = kv[2] } } END { print m }' "$1"; }
# the value of NAME=VALUE on stdin
field() { tr ' ' '\n' | sed -n "s/^$1=//p" | head -1; }

# run_target CONFIG MODE COUNT -> output file; CONFIG: base, cupti_off, cupti_on, pass_through
run_target() {
    local config=$1 mode=$2 count=$3 out=$work/$1-$2-$RANDOM.txt
    local run_dir=$work/run-$config-$mode
    rm -rf "$run_dir" && mkdir -p "$run_dir"
    case $config in
    base) LD_LIBRARY_PATH=$simgpu "$bin/tbdprof_bench_target" "$mode" "$count" "$reps" > "$out" ;;
    pass_through) LD_LIBRARY_PATH=$simgpu LD_PRELOAD=$preload "$bin/tbdprof_bench_target" "$mode" "$count" "$reps" > "$out" ;;
    cupti_off) TBDPROF_CUPTI=0 TBDPROF_RUN_DIR=$run_dir LD_LIBRARY_PATH=$simgpu LD_PRELOAD=$preload \
        "$bin/tbdprof_bench_target" "$mode" "$count" "$reps" > "$out" ;;
    cupti_on) TBDPROF_RUN_DIR=$run_dir LD_LIBRARY_PATH=$simgpu LD_PRELOAD=$preload \
        "$bin/tbdprof_bench_target" "$mode" "$count" "$reps" > "$out" ;;
    # No collector; the program traces its own kernels with CUPTI (minimal_cupti_tracer.h): the part
    # of cupti_on that is CUPTI's record keeping, paid by any CUPTI-based tool.
    cupti_alone) TBD_BENCH_CUPTI_ALONE=1 LD_LIBRARY_PATH=$simgpu \
        "$bin/tbdprof_bench_target" "$mode" "$count" "$reps" > "$out" 2> /dev/null ;;
    esac
    echo "$out"
}

declare -A result best
minimum() { sort -g | head -1; }
# measure MODE OP COUNT CONFIGS...: configurations interleaved run by run, so that the machine's load
# falls on all of them alike; result[config,op,metric] = median over runs of each process's minimum,
# best[config,op,metric] = the minimum over all processes.
measure() {
    local mode=$1 op=$2 count=$3
    shift 3
    local config metric r
    declare -A samples=()
    for ((r = 0; r < runs; ++r)); do
        for config in "$@"; do
            local out
            out=$(run_target "$config" "$mode" "$count")
            for metric in wall_ns thread_cpu_ns process_cpu_ns; do
                samples[$config,$metric]+="$(min_field "$out" "$op" "$metric") "
                if [ "$op" = malloc ]; then samples[$config,free_$metric]+="$(min_field "$out" free "$metric") "; fi
            done
        done
    done
    for config in "$@"; do
        for metric in wall_ns thread_cpu_ns process_cpu_ns; do
            result[$config,$op,$metric]=$(echo "${samples[$config,$metric]}" | tr ' ' '\n' | grep . | median)
            best[$config,$op,$metric]=$(echo "${samples[$config,$metric]}" | tr ' ' '\n' | grep . | minimum)
            if [ "$op" = malloc ]; then
                result[$config,free,$metric]=$(echo "${samples[$config,free_$metric]}" | tr ' ' '\n' | grep . | median)
                best[$config,free,$metric]=$(echo "${samples[$config,free_$metric]}" | tr ' ' '\n' | grep . | minimum)
            fi
        done
    done
}

echo "tbdprof collector benchmark: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F)"
echo "runs=$runs processes per configuration, reps=$reps (first dropped), launches=$launches, allocs=$allocs"
echo

measure launch launch "$launches" base pass_through cupti_off cupti_on cupti_alone
measure driver driver_launch "$launches" base cupti_off cupti_on cupti_alone
measure alloc malloc "$allocs" base cupti_off cupti_on

added() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", a - b }'; }
echo "ns per operation: median over $runs processes of each one's minimum; [best process in brackets]"
printf '%-26s %15s %15s %15s   %s\n' "" wall thread_cpu process_cpu "added thread_cpu (wall)"
for op in launch driver_launch malloc free; do
    for config in base pass_through cupti_off cupti_on cupti_alone; do
        [ -n "${result[$config,$op,wall_ns]:-}" ] || continue
        extra=""
        if [ "$config" != base ]; then
            extra="$(added "${result[$config,$op,thread_cpu_ns]}" "${result[base,$op,thread_cpu_ns]}") [$(added "${best[$config,$op,thread_cpu_ns]}" "${best[base,$op,thread_cpu_ns]}")]"
            extra+=" ($(added "${result[$config,$op,wall_ns]}" "${result[base,$op,wall_ns]}"))"
        fi
        row=""
        for metric in wall_ns thread_cpu_ns process_cpu_ns; do
            row+=$(printf ' %15s' "$(printf '%.0f [%.0f]' "${result[$config,$op,$metric]}" "${best[$config,$op,$metric]}")")
        done
        printf '%-26s%s   %s\n' "$op, $config" "$row" "$extra"
    done
done
echo

if command -v valgrind > /dev/null && [ "${SKIP_CALLGRIND:-0}" != 1 ]; then
    echo "instructions per runtime launch (callgrind, bench/collector/count_instructions.sh):"
    "$here/count_instructions.sh" "$build" | sed 's/^/    /'
    echo
fi

# Nothing lost in the recorded launch loops (the last process of each configuration): every launch
# is a kernel with its host launch in the trace. (A ring that overflows drops host records, which
# would also make the hook look cheaper.) The CUPTI-on trace is a second build-speed figure.
expected_kernels=$((launches * reps + 1))
for config in cupti_off cupti_on; do
    line=$("$bin/tbdprof-build-trace" "$work/run-$config-launch" "$work/loop-$config.sqlite" 2>/dev/null)
    seen=$(sqlite3 "$work/loop-$config.sqlite" "SELECT COUNT(*) FROM kernels WHERE thread IS NOT NULL")
    timed=$(sqlite3 "$work/loop-$config.sqlite" "SELECT COUNT(*) FROM kernels WHERE duration_ns IS NOT NULL")
    echo "launch loop, $config: $expected_kernels launched, $(echo "$line" | field kernels) kernels in the trace," \
         "$seen with their host launch, $timed with device times"
    if [ "$config" = cupti_on ]; then loop_line=$line; fi
done
# Writer throughput.
writer_eps=()
for threads in 1 2; do
    lines=()
    for ((r = 0; r < 3; ++r)); do lines+=("$("$writer_bench" 2000000 "$threads" "$work")"); done
    eps=$(for l in "${lines[@]}"; do echo "$l" | field events_per_second; done | median)
    wcpu=$(for l in "${lines[@]}"; do echo "$l" | field writer_cpu_ns_per_event; done | median)
    pcpu=$(for l in "${lines[@]}"; do echo "$l" | field producer_cpu_ns_per_event; done | median)
    waits=$(for l in "${lines[@]}"; do echo "$l" | field full_ring_waits; done | median)
    echo "writer, $threads producer(s), 128-byte launch records: $(awk -v e="$eps" 'BEGIN { printf "%.2f", e / 1e6 }') M events/s" \
         "(writer CPU $wcpu ns/event, producer CPU $pcpu ns/event, full-ring waits $waits)"
    writer_eps+=("$eps")
done

# A training sample recorded on the simulated GPU: trace size per kernel, edges, build speed.
sample_dir=$work/run-mlp
rm -rf "$sample_dir" && mkdir -p "$sample_dir"
TBDPROF_RUN_DIR=$sample_dir LD_LIBRARY_PATH=$simgpu LD_PRELOAD=$preload "$bin/mlp_train" --iterations 2000 > /dev/null
build_lines=()
for ((r = 0; r < 3; ++r)); do build_lines+=("$("$bin/tbdprof-build-trace" "$sample_dir" "$work/mlp.sqlite" 2>/dev/null)"); done
build_eps=$(for l in "${build_lines[@]}"; do echo "$l" | field events_per_second; done | median)
events=$(echo "${build_lines[0]}" | field events)
size_query="SELECT (SELECT COUNT(*) FROM kernels),
  (SELECT SUM(pgsize) FROM dbstat WHERE name = 'kernels'),
  (SELECT SUM(payload) FROM dbstat WHERE name = 'kernels'),
  (SELECT COUNT(*) FROM kernel_allocations),
  (SELECT SUM(pgsize) FROM dbstat WHERE name = 'kernel_allocations'),
  (SELECT page_count * page_size FROM pragma_page_count, pragma_page_size);"
IFS='|' read -r kernels kernel_bytes kernel_payload edges edge_bytes file_bytes <<< "$(sqlite3 "$work/mlp.sqlite" "$size_query")"
per_kernel=$(awk -v b="$kernel_bytes" -v k="$kernels" 'BEGIN { printf "%.1f", b / k }')
echo "mlp_train --iterations 2000: $kernels kernels, kernels table $kernel_bytes bytes (payload $kernel_payload)," \
     "$edges edges ($(awk -v e="$edges" -v k="$kernels" 'BEGIN { printf "%.2f", e / k }') per kernel," \
     "$(awk -v b="$edge_bytes" -v e="$edges" 'BEGIN { printf "%.1f", b / e }') bytes each), file $file_bytes bytes"
echo "build: $events raw events, $(awk -v e="$build_eps" 'BEGIN { printf "%.2f", e / 1e6 }') M events/s" \
     "($(awk -v e="$build_eps" 'BEGIN { printf "%.2f", 1e6 / e }') s per million events)"
loop_eps=$(echo "$loop_line" | field events_per_second)
echo "build of the launch loop: $(echo "$loop_line" | field events) raw events, $(awk -v e="$loop_eps" 'BEGIN { printf "%.2f", e / 1e6 }') M events/s"
echo

verdict() { if awk "BEGIN { exit !($1) }"; then echo met; else echo MISSED; fi; }
launch_added=$(added "${result[cupti_on,launch,thread_cpu_ns]}" "${result[base,launch,thread_cpu_ns]}")
launch_added_off=$(added "${result[cupti_off,launch,thread_cpu_ns]}" "${result[base,launch,thread_cpu_ns]}")
# What tbdprof adds on top of CUPTI's own record keeping (cupti_on - cupti_alone), per API path.
launch_over_cupti=$(added "${result[cupti_on,launch,thread_cpu_ns]}" "${result[cupti_alone,launch,thread_cpu_ns]}")
driver_over_cupti=$(added "${result[cupti_on,driver_launch,thread_cpu_ns]}" "${result[cupti_alone,driver_launch,thread_cpu_ns]}")
driver_added_off=$(added "${result[cupti_off,driver_launch,thread_cpu_ns]}" "${result[base,driver_launch,thread_cpu_ns]}")
alloc_added=$(added "${result[cupti_on,malloc,thread_cpu_ns]}" "${result[base,malloc,thread_cpu_ns]}")
echo "verdicts use the medians (thread CPU time of the launching thread, added to the same program without the collector)"
best_writer=${writer_eps[0]}  # one producer, median of three
printf '%-40s %-16s %-12s %s\n' target measured goal verdict
printf '%-40s %-16s %-12s %s\n' "launch, added (CUPTI on, thread CPU)" "$launch_added ns" "<= 150 ns" "$(verdict "$launch_added <= 150")"
printf '%-40s %-16s %-12s %s\n' "launch, added (CUPTI off, thread CPU)" "$launch_added_off ns" "<= 150 ns" "$(verdict "$launch_added_off <= 150")"
printf '%-40s %-16s %-12s %s\n' "launch, added over CUPTI alone" "$launch_over_cupti ns" "<= 150 ns" "$(verdict "$launch_over_cupti <= 150")"
printf '%-40s %-16s %-12s %s\n' "driver launch, added (CUPTI off)" "$driver_added_off ns" "<= 150 ns" "$(verdict "$driver_added_off <= 150")"
printf '%-40s %-16s %-12s %s\n' "driver launch, added over CUPTI alone" "$driver_over_cupti ns" "<= 150 ns" "$(verdict "$driver_over_cupti <= 150")"
printf '%-40s %-16s %-12s %s\n' "allocation + 24-frame stack, added" "$alloc_added ns" "<= 5000 ns" "$(verdict "$alloc_added <= 5000")"
printf '%-40s %-16s %-12s %s\n' "writer throughput (1 producer)" "$(awk -v e="$best_writer" 'BEGIN { printf "%.1f M/s", e / 1e6 }')" ">= 5 M/s" "$(verdict "$best_writer >= 5e6")"
printf '%-40s %-16s %-12s %s\n' "bytes per kernel (kernels table)" "$per_kernel B" "<= 48 B" "$(verdict "$per_kernel <= 48")"
printf '%-40s %-16s %-12s %s\n' "trace build speed" "$(awk -v e="$build_eps" 'BEGIN { printf "%.2f M/s", e / 1e6 }')" ">= 1 M/s" "$(verdict "$build_eps >= 1e6")"
