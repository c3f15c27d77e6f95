#!/usr/bin/env bash
# Real training programs written by others (../shared/realworld: llm.c, Darknet), built with the CUDA
# toolkit, recorded under `tbdprof --sim` and scored against labels written from their own source.
# Fails when any configuration tags less than MIN of its labelled bytes right, or when the trace's
# training iterations differ from the steps the program printed.
#   realworld.sh PROGRAM BUILD_DIR REALWORLD_DIR [MIN]     PROGRAM: llmc | darknet
# Exit 77 (skipped) when REALWORLD_DIR lacks the program.
set -uo pipefail
program=$1; build=$2; root=$3; min=${4:-0.95}
runner=$root/$program/run.sh
if [ ! -f "$runner" ] || [ ! -f "$root/tagcheck.py" ]; then
    echo "SKIP: $runner not found: the real programs (../shared/realworld beside the project) are absent," \
         "so tagging on real programs is not checked"
    exit 77
fi
for tool in python3 sqlite3; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is needed to score the real programs"; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case $program in
    llmc) export LLMC_KEEP=1; configs=${LLMC_BUILDS:-fp32 bf16}; labels_suffix=labels.full.tsv ;;
    darknet) export DARKNET_KEEP=1; configs=${DARKNET_OPTIMIZERS:-sgd adam}; labels_suffix=labels.tsv ;;
    *) echo "FAIL: unknown program $program"; exit 1 ;;
esac
TMPDIR=$work bash "$runner" "$build" >"$work/run.log" 2>&1
runner_status=$?
tail -1 "$work/run.log"
kept=$(find "$work" -maxdepth 1 -type d -name '*-realworld.*' | head -1)
[ -n "$kept" ] || { cat "$work/run.log"; echo "FAIL: the runner kept no work directory"; exit 1; }

# The steps the program itself printed: llm.c "step    3/6: ...", Darknet "3, 0.05: ... images".
steps_printed() {
    case $program in
        llmc) grep -c '^step ' "$1" ;;
        darknet) grep -cE '^[0-9]+, [0-9.]+: .* images$' "$1" ;;
    esac
}

failures=0
for cfg in $configs; do
    trace=$kept/$cfg.sqlite labels=$kept/$cfg.$labels_suffix
    if [ ! -f "$trace" ] || [ ! -f "$labels" ]; then
        echo "FAIL: $program $cfg: no trace or labels (see the runner's output below)"; failures=$((failures + 1)); continue
    fi
    score=$(python3 "$root/tagcheck.py" "$trace" "$labels") || { echo "FAIL: $program $cfg: tagcheck failed"; failures=$((failures + 1)); continue; }
    accuracy=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["byte_accuracy"])' "$score")
    steps=$(steps_printed "$kept/$cfg.tbdprof.log")
    iterations=$(sqlite3 "$trace" "SELECT count(*) FROM iterations WHERE coalesce(kind, 'training') = 'training'")
    echo "$program $cfg: $score"
    echo "$program $cfg: byte accuracy $accuracy (at least $min), training iterations $iterations for $steps steps"
    if ! python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) else 1)' "$accuracy" "$min"; then
        echo "FAIL: $program $cfg: $accuracy of the labelled bytes tagged right, below $min"; failures=$((failures + 1))
    fi
    if [ "$steps" -eq 0 ] || [ "$iterations" -ne "$steps" ]; then
        echo "FAIL: $program $cfg: $iterations training iterations in the trace, the program ran $steps steps"
        failures=$((failures + 1))
    fi
done
if [ "$runner_status" -ne 0 ] && [ "$failures" -eq 0 ]; then
    echo "FAIL: the runner exited $runner_status"; failures=1
fi
[ "$failures" -eq 0 ] || { echo "--- runner output"; cat "$work/run.log"; exit 1; }
echo "ok: $program, every configuration"
