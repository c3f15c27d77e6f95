#!/usr/bin/env bash
# Records a sample with --alloc pool and checks the report's memory breakdown at the peak against
# the labels' ground truth (pool_breakdown.py).
#   pool_breakdown.sh PYTHON MAX_ERROR PROGRAM [ARGS...]   (env: TBDPROF, TBDPROF_BIN_DIR)
set -euo pipefail
python=$1; max_error=$2; program=$3; shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TBD_SAMPLE_LABELS="$work/labels.tsv" "$TBDPROF" --sim -o "$work/run.sqlite" -- \
    "$TBDPROF_BIN_DIR/$program" "$@" >"$work/record.log" 2>&1 || { cat "$work/record.log"; exit 1; }
if [ -n "${RETAG:-}" ]; then "$RETAG" tag "$work/run.sqlite" >/dev/null; fi
report=${RETAG:-$TBDPROF}
"$report" report "$work/run.sqlite" --format json -o "$work/report.json"
"$python" "$(dirname "$0")/pool_breakdown.py" "$work/run.sqlite" "$work/report.json" "$work/labels.tsv" "$max_error"
