#!/usr/bin/env bash
# Several CUDA processes in one run (a shell forks and execs two samples at once): one trace, every
# process's work matches the truth (the truth file holds both pids).
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}" "${TRACE_VS_TRUTH:?}"
cd "$WORK" || exit 1
TBDSIM_TRUTH="$WORK/truth.tsv" "$TBDPROF" --sim -o "$WORK/trace.sqlite" -- bash -c \
    '"$0/mlp_train" --iterations 2 >/dev/null & "$0/lstm_train" --iterations 1 --seq-len 3 >/dev/null & wait' \
    "$TBDPROF_BIN_DIR" >"$WORK/out" 2>"$WORK/err"
status=$?
cat "$WORK/err"
[ "$status" -eq 0 ] || fail "tbdprof exited $status"
pids=$(cut -f2 "$WORK/truth.tsv" | sort -u | wc -l)
[ "$pids" -eq 2 ] || fail "the truth holds $pids processes, want 2"
grep -q "^  processes " "$WORK/err" || fail "the summary does not mention several processes"
"$TRACE_VS_TRUTH" "$WORK/trace.sqlite" "$WORK/truth.tsv" || fail "trace differs from the truth"
finish
