#!/usr/bin/env bash
# Iterations by repetition alone: the program's NVTX ranges are renamed away, and the steps found
# from the kernel sequence must be the labelled training steps (same count), with the validation
# passes and checkpoint saves set apart as non-training spans (same count).
#   repetition_steps.sh PROGRAM [ARGS...]      (env: TBDPROF, TBDPROF_BIN_DIR)
set -euo pipefail
program=$1; shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TBD_SAMPLE_LABELS="$work/labels.tsv" "$TBDPROF" --sim -o "$work/run.sqlite" -- "$TBDPROF_BIN_DIR/$program" "$@" \
    >"$work/record.log" 2>&1 || { cat "$work/record.log"; exit 1; }
sqlite3 "$work/run.sqlite" "UPDATE ranges SET name = 'range ' || id"
"$TBDPROF" tag "$work/run.sqlite" >/dev/null
steps=$(awk -F'\t' '$1 == "span" && $2 == "training"' "$work/labels.tsv" | wc -l)
others=$(awk -F'\t' '$1 == "span" && $2 != "training"' "$work/labels.tsv" | wc -l)
read -r found apart source < <(sqlite3 -separator ' ' "$work/run.sqlite" "SELECT
    (SELECT count(*) FROM iterations WHERE kind = 'training'), (SELECT count(*) FROM iterations WHERE kind = 'non_training'),
    coalesce((SELECT source FROM iterations LIMIT 1), 'none')")
echo "$program $*: $found steps and $apart spans set apart by $source; labelled $steps and $others"
[ "$source" = repetition ] && [ "$found" = "$steps" ] && [ "$apart" = "$others" ] || { echo FAIL; exit 1; }
echo ok
