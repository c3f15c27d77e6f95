#!/usr/bin/env bash
# Records a sample on the simulated GPU with its ground-truth labels and checks that the memory
# tagging agrees on at least MIN of the labelled bytes.
#   accuracy.sh MIN PROGRAM [ARGS...]      (env: TBDPROF, TAG_ACCURACY, TBDPROF_BIN_DIR)
set -euo pipefail
min=$1; program=$2; shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TBD_SAMPLE_LABELS="$work/labels.tsv" "$TBDPROF" --sim -o "$work/run.sqlite" -- \
    "$TBDPROF_BIN_DIR/$program" "$@" >"$work/record.log" 2>&1 || { cat "$work/record.log"; exit 1; }
"$TAG_ACCURACY" "$work/run.sqlite" "$work/labels.tsv" --min "$min"
