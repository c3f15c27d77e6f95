#!/usr/bin/env bash
# Managed-memory advice/prefetch, host registration and peer copies between two simulated devices
# (runtime_unified_test) recorded by tbdprof: every copy, set and allocation as the truth has them,
# the peer copies with their addresses and API.
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}" "${TRACE_VS_TRUTH:?}"
cd "$WORK" || exit 1
TBDSIM_DEVICE_COUNT=2 TBDSIM_TRUTH="$WORK/truth.tsv" "$TBDPROF" --sim -o "$WORK/trace.sqlite" -- \
    "$TBDPROF_BIN_DIR/runtime_unified_test" >"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -eq 0 ] || fail "tbdprof exited $status: $(cat "$WORK/out" "$WORK/err")"
[ -s "$WORK/trace.sqlite" ] || { fail "no trace"; finish; }
"$TRACE_VS_TRUTH" "$WORK/trace.sqlite" "$WORK/truth.tsv" && pass "trace matches the truth" ||
    fail "trace differs from the truth"
peer=$(sqlite3 "$WORK/trace.sqlite" "SELECT count(*) FROM copies WHERE kind = 'dtod' AND api = 'runtime'")
[ "$peer" -eq 2 ] && pass "two peer copies through the runtime" || fail "$peer peer copies, want 2"
finish
