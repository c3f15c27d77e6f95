#!/usr/bin/env bash
# Records a sample on the simulated GPU and compares the trace with the simulated GPU's ground truth:
#   record_sample.sh SAMPLE [ARGS...]
source "$(dirname "$0")/common.sh"
sample=$1
shift
: "${TBDPROF_BIN_DIR:?}" "${TRACE_VS_TRUTH:?}"
cd "$WORK" || exit 1
TBDSIM_TRUTH="$WORK/truth.tsv" TBD_SAMPLE_LABELS="$WORK/labels.tsv" \
    "$TBDPROF" --sim -o "$WORK/trace.sqlite" -- "$TBDPROF_BIN_DIR/$sample" "$@" >"$WORK/out" 2>"$WORK/err"
status=$?
cat "$WORK/err"
[ "$status" -eq 0 ] || fail "tbdprof exited $status"
[ -s "$WORK/trace.sqlite" ] || fail "no trace"
[ -e "$WORK/trace.sqlite.tmp" ] && fail "temporary trace left behind"
for field in duration kernels copies "peak device memory" trace; do
    grep -q "^  $field " "$WORK/err" || fail "summary lacks '$field'"
done
# Nothing is dropped here, so every device record must join its host call by CUPTI's id.
if grep -E "device records (had lost their correlation record|without a matching host call)" "$WORK/err"; then
    fail "device records not joined to their host calls"
fi
labels=()
[ -s "$WORK/labels.tsv" ] && labels=(--labels "$WORK/labels.tsv")
"$TRACE_VS_TRUTH" "$WORK/trace.sqlite" "$WORK/truth.tsv" "${labels[@]}" || fail "trace differs from the truth"
finish
