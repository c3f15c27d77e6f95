#!/usr/bin/env bash
# Records cublaslt_program with `tbdprof --sim` and checks the trace's library_calls against what the
# program did and against the simulated GPU's ground truth (lt_trace_check).
#   record_cublaslt.sh TBDPROF PROGRAM CHECKER
set -u
tbdprof=$1 program=$2 checker=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-cublaslt-XXXXXX")
trap 'rm -rf "$work"' EXIT
TBDSIM_TRUTH="$work/truth.tsv" "$tbdprof" --sim -o "$work/trace.sqlite" -- "$program" "$work/expected.txt" \
    >"$work/out" 2>"$work/err"
status=$?
if [ "$status" -ne 0 ]; then
    echo "tbdprof exited $status:"
    cat "$work/err"
    exit 1
fi
"$checker" "$work/trace.sqlite" "$work/truth.tsv" "$work/expected.txt"
