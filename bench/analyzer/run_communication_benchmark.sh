#!/bin/sh
# Communication analysis of a data-parallel job: RANKS traces of KERNELS kernels each (every 10th an
# NCCL all-reduce on its own stream), analysed by `tbdprof report --format json`, all ranks at once;
# then tbdprof-fleet over FLEET_TRACES small rank traces on 1 and 2 local Dask workers.
#   bench/analyzer/run_communication_benchmark.sh BUILD_DIR [WORK_DIR]
#   (RANKS=8 KERNELS=1000000 FLEET_TRACES=64 by default; traces are generated once, then reused)
# Prints wall time, CPU time and the peak RSS of each rank's analysis, and their sums, with the load
# average before the run (the machine is shared: CPU time is the figure that does not depend on it).
set -eu
case "${1:-}" in
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "$(basename "$0"): unknown option $1 (--help for usage)" >&2; exit 2 ;;
esac
build=${1:?usage: run_communication_benchmark.sh BUILD_DIR [WORK_DIR]}
work=${2:-/tmp/tbdprof-comm-bench}
ranks=${RANKS:-8}
kernels=${KERNELS:-1000000}
fleet_traces=${FLEET_TRACES:-64}
mkdir -p "$work"
r=0
while [ $r -lt $ranks ]; do
    trace="$work/rank-$r-$kernels.sqlite"
    [ -f "$trace" ] || "$build/bin/tbdprof_trace_generator" "$trace" --kernels "$kernels" --seed $((r + 1)) \
        --communication-every 10 >/dev/null
    r=$((r + 1))
done
echo "$ranks traces of $kernels kernels ($(du -ch "$work"/rank-*-"$kernels".sqlite | tail -1 | cut -f1) in all)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
start=$(date +%s.%N)
r=0
while [ $r -lt $ranks ]; do
    /usr/bin/time -f "%M %e %U %S" -o "$work/time-$r" "$build/bin/tbdprof" report "$work/rank-$r-$kernels.sqlite" \
        --format json --quiet -o /dev/null &
    r=$((r + 1))
done
wait
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v n="$ranks" 'BEGIN { printf "all %d ranks at once: wall %.2f s\n", n, e - s }'
cat "$work"/time-* | awk '{ sum += $1; if ($1 > max) max = $1; if ($2 > slow) slow = $2; cpu += $3 + $4 }
    END { printf "peak RSS per rank: max %.0f MiB, sum over ranks %.0f MiB; slowest rank %.2f s wall; CPU %.2f s in all\n",
                 max / 1024, sum / 1024, slow, cpu }'
TBDPROF_ANALYZER_TIMING=1 "$build/bin/tbdprof" report "$work/rank-0-$kernels.sqlite" --format json --quiet -o /dev/null 2>&1 |
    sed 's/^/    one rank alone: /'

# The fleet: FLEET_TRACES traces of FLEET_KERNELS kernels each (generated once); FLEET_TRACES=0 skips it.
[ "$fleet_traces" -gt 0 ] || exit 0
fleet_kernels=${FLEET_KERNELS:-100000}
fleet="$work/fleet-$fleet_kernels"
mkdir -p "$fleet"
i=0
while [ $i -lt $fleet_traces ]; do
    [ -f "$fleet/rank-$i.sqlite" ] || "$build/bin/tbdprof_trace_generator" "$fleet/rank-$i.sqlite" \
        --kernels "$fleet_kernels" --seed $((i + 1)) --communication-every 10 >/dev/null
    i=$((i + 1))
done
python=${FLEET_PYTHON:-python3}
$python -c "import distributed" 2>/dev/null || python=/usr/bin/python3
echo "load average before the fleet: $(cut -d' ' -f1-3 /proc/loadavg)"
for workers in 1 2 4; do
    rm -f "$work/fleet-$workers.json"
    $python "$build/bin/tbdprof-fleet" "$fleet"/rank-*.sqlite --workers $workers --quiet --format json -o "$work/fleet-$workers.json"
    $python -c "import json, sys; t = json.load(open(sys.argv[1]))['timing']
print(f'fleet, {sys.argv[2]} traces of {sys.argv[3]} kernels, {sys.argv[4]} local worker(s): cluster start {t[\"cluster_s\"]:.2f} s, '
      f'analysis {t[\"analysis_s\"]:.2f} s wall, {t[\"task_s\"]:.2f} s of tasks ({t[\"task_s\"] / t[\"analysis_s\"]:.2f} busy workers)')" \
        "$work/fleet-$workers.json" "$fleet_traces" "$fleet_kernels" "$workers"
done
