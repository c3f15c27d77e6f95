#!/usr/bin/env bash
# tbdprof against Holistic Trace Analysis (HTA) on the same Kineto traces: per trace, HTA's load plus
# its kernel and temporal breakdowns (hta_analysis.py) against `tbdprof import` + `tbdprof report`;
# wall time, CPU time (user + sys, children included) and peak RSS, the median of RUNS runs (3) of
# each. Then simdjson's own parse rate of the same JSON next to the importer's
# (tbdprof_interop_bench --simdjson-rate).
#
#   bench/interop/hta_compare.sh [TRACE.json[.gz]...]
#       default: the Kineto traces in ../shared/validation-data (memory timelines left out: HTA
#       reads no such file)
#   TBDPROF_BUILD=DIR     the build folder (default build)
#   TBDPROF_HTA_VENV=DIR  HTA's virtual environment, outside the repository (default
#                         ~/.cache/tbdprof/hta-venv); created and filled with pip when missing
#   RUNS=N                runs per measurement (default 3)
#
# Exit status: 0 measured; 77 HTA cannot be installed (the package index cannot be reached); 1 else.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${TBDPROF_BUILD:-$root/build}
venv=${TBDPROF_HTA_VENV:-${HOME:-/tmp}/.cache/tbdprof/hta-venv}
runs=${RUNS:-3}
tbdprof=$build/bin/tbdprof
bench=$build/bin/tbdprof_interop_bench
for tool in "$tbdprof" "$bench"; do
    [ -x "$tool" ] || { echo "hta_compare: $tool is missing: build first" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "hta_compare: /usr/bin/time is missing (Debian: apt-get install time)" >&2; exit 1; }

if ! "$venv/bin/python" -c "import hta" 2>/dev/null; then
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv" >&2 || { echo "hta_compare: could not create a venv in $venv" >&2; exit 1; }
    log=$(mktemp)
    if ! "$venv/bin/pip" install --quiet --disable-pip-version-check HolisticTraceAnalysis >"$log" 2>&1; then
        if grep -qiE "Could not find a version|No matching distribution|connection|resolve|network is unreachable|timed out" "$log"; then
            echo "hta_compare: the Python package index cannot be reached: HTA not installed, nothing compared" >&2
            rm -f "$log"
            exit 77
        fi
        tail -n 20 "$log" >&2
        rm -f "$log"
        exit 1
    fi
    rm -f "$log"
fi
hta_version=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('HolisticTraceAnalysis'))")

traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
    data=${TBDPROF_VALIDATION_DATA:-$root/../shared/validation-data}
    [ -d "$data" ] || { echo "hta_compare: no traces given and $data is absent" >&2; exit 1; }
    mapfile -t traces < <(ls "$data"/*/*.json.gz "$data"/*/*.json 2>/dev/null | grep -v memory_timeline)
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/hta-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT

# One timed command -> "wall cpu rss_kb" (CPU: user + sys, waited-for children included).
timed() {
    /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null 2>"$work/stderr" ||
        { echo "hta_compare: failed: $*" >&2; tail -n 5 "$work/stderr" >&2; exit 1; }
    awk '{ printf "%.3f %.3f %d\n", $1, $2 + $3, $4 }' "$work/time"
}
tbdprof_run() {
    local a b
    a=$(timed "$tbdprof" import "$1" -o "$work/t.sqlite" --force --quiet)
    b=$(timed "$tbdprof" report "$work/t.sqlite" --format json -o "$work/report.json" --force)
    echo "$a $b" | awk '{ printf "%.3f %.3f %d\n", $1 + $4, $2 + $5, ($3 > $6 ? $3 : $6) }'
}
# The median of each column over `runs` lines.
median() {
    for col in 1 2 3; do
        awk -v c=$col '{ print $c }' "$1" | sort -g | awk '{ v[NR] = $1 } END { printf "%s ", v[int((NR + 1) / 2)] }'
    done
    echo
}

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores; HTA $hta_version; median of $runs"
printf "%-48s %10s %10s %10s | %10s %10s %10s | %8s %8s %8s\n" trace "HTA wall" "HTA cpu" "HTA MiB" "tbd wall" "tbd cpu" \
    "tbd MiB" "x wall" "x cpu" "x mem"
for trace in "${traces[@]}"; do
    : >"$work/hta" && : >"$work/tbd"
    for ((i = 0; i < runs; ++i)); do
        timed "$venv/bin/python" "$here/hta_analysis.py" "$trace" >>"$work/hta"
        tbdprof_run "$trace" >>"$work/tbd"
    done
    read -r hw hc hm < <(median "$work/hta")
    read -r tw tc tm < <(median "$work/tbd")
    awk -v n="$(basename "$trace")" -v hw="$hw" -v hc="$hc" -v hm="$hm" -v tw="$tw" -v tc="$tc" -v tm="$tm" 'BEGIN {
        printf "%-48s %9.2fs %9.2fs %10.0f | %9.2fs %9.2fs %10.0f | %7.1fx %7.1fx %7.1fx\n",
               substr(n, 1, 48), hw, hc, hm / 1024, tw, tc, tm / 1024, hw / tw, hc / tc, hm / tm }'
done
echo
echo "# parse rates: simdjson's own pass over every event's fields vs the importer's read + parse (plain JSON; 'from .gz': inflating included)"
"$bench" --simdjson-rate "${traces[@]}"
