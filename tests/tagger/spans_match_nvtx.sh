#!/usr/bin/env bash
# Checks a sample's true iteration labels (`span` lines, docs/samples.md) against what the trace
# recorded: the program's NVTX step range N must lie inside labelled training span N, and no
# validation or checkpoint span may overlap a step range. This ties the labels' host clock to the
# trace's, so iteration detection can be scored against the spans.
#   spans_match_nvtx.sh PROGRAM [ARGS...]      (env: TBDPROF, TBDPROF_BIN_DIR)
set -euo pipefail
program=$1; shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
TBD_SAMPLE_LABELS="$work/labels.tsv" "$TBDPROF" --sim -o "$work/run.sqlite" -- \
    "$TBDPROF_BIN_DIR/$program" "$@" >"$work/record.log" 2>&1 || { cat "$work/record.log"; exit 1; }
start=$(sqlite3 "$work/run.sqlite" "SELECT start_monotonic_ns FROM run")
# Step ranges: names ending in a number (Train step 3, step 3, iteration 3, ProfilerStep#3).
sqlite3 -separator $'\t' "$work/run.sqlite" \
    "SELECT name, begin_ns, end_ns FROM ranges WHERE end_ns IS NOT NULL ORDER BY begin_ns" >"$work/ranges.tsv"
awk -F'\t' -v start="$start" '
FILENAME == ARGV[1] {
    if (match($1, /[0-9]+$/) && $1 !~ /^(forward|backward|optimizer)$/) {
        n = substr($1, RSTART) + 0; begin[n] = $2 + 0; end[n] = $3 + 0; ranges++
    }
    next
}
$1 == "span" {
    b = $4 - start; e = $5 - start
    if ($2 == "training") {
        steps++
        if (!($3 in begin)) { printf "no NVTX range for training step %d\n", $3; bad++; next }
        if (begin[$3] < b || end[$3] > e) { printf "step %d: range [%d, %d] not inside span [%d, %d]\n", $3, begin[$3], end[$3], b, e; bad++ }
    } else {
        others++
        for (n in begin) if (begin[n] < e && end[n] > b) { printf "%s span %d overlaps step range %d\n", $2, $3, n; bad++ }
    }
}
END {
    if (steps == 0 || ranges != steps) { printf "%d training spans, %d step ranges\n", steps, ranges; bad++ }
    if (bad) exit 1
    printf "spans match: %d training steps inside their NVTX ranges, %d validation/checkpoint spans outside them\n", steps, others
}' "$work/ranges.tsv" "$work/labels.tsv"
