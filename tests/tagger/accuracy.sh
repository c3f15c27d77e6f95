#!/usr/bin/env bash
# Records a sample on the simulated GPU with its ground-truth labels and checks that the memory
# tagging agrees on at least MIN of the labelled bytes.
#   accuracy.sh MIN PROGRAM [ARGS...]      (env: TBDPROF, TAG_ACCURACY, TBDPROF_BIN_DIR)
# With MIN_MERGED=X it also requires X with activations and workspace counted as one.
# With NO_ACCESS_HINTS=1 the trace loses what mangled names say about const pointers before it is
# tagged again, as for frameworks whose kernels take pointers inside structs or are extern "C".
# With STEPS_EXACT=1 the trace's training iterations must number exactly the labelled training steps.
set -euo pipefail
min=$1; program=$2; shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TBD_SAMPLE_LABELS="$work/labels.tsv" "$TBDPROF" --sim -o "$work/run.sqlite" -- \
    "$TBDPROF_BIN_DIR/$program" "$@" >"$work/record.log" 2>&1 || { cat "$work/record.log"; exit 1; }
# RETAG=TBDPROF tags again with another build than the recorder (to try a tagger under development).
if [ -n "${RETAG:-}" ]; then "$RETAG" tag "$work/run.sqlite" >/dev/null; fi
if [ "${NO_ACCESS_HINTS:-0}" = 1 ]; then
    sqlite3 "$work/run.sqlite" "UPDATE kernel_allocations SET read_only = 0;
        UPDATE strings SET text = 'k' || text WHERE id IN (SELECT mangled FROM functions);"
    "$TBDPROF" tag "$work/run.sqlite" >/dev/null
fi
status=0
"$TAG_ACCURACY" "$work/run.sqlite" "$work/labels.tsv" --min "$min" ${MIN_MERGED:+--min-merged "$MIN_MERGED"} || status=$?
if [ "${STEPS_EXACT:-0}" = 1 ]; then
    steps=$(awk -F'\t' '$1 == "span" && $2 == "training"' "$work/labels.tsv" | wc -l)
    found=$(sqlite3 "$work/run.sqlite" "SELECT count(*) FROM iterations WHERE kind = 'training'")
    echo "iterations: $found in the trace for $steps steps the program ran"
    if [ "$steps" -eq 0 ] || [ "$found" != "$steps" ]; then echo "FAIL: iterations differ from the steps"; status=1; fi
fi
exit $status
