#!/usr/bin/env bash
# scripts/ci/profile-gate.sh, as the CI recipes in docs/ci.md call it: a run within budget passes
# and publishes its reports, one outside it fails with the violation in junit.xml, bad input is
# refused.
source "$(dirname "$0")/../cli/common.sh"
gate="$(dirname "$0")/../../scripts/ci/profile-gate.sh"
printf 'max-peak-memory = 1GiB\nmin-gpu-utilization = 0.001\n' >"$WORK/ok.budget"
printf 'max-peak-memory = 1MiB\n' >"$WORK/tight.budget"
export GITHUB_STEP_SUMMARY="$WORK/summary.md"
TBDPROF="$TBDPROF" bash "$gate" "$WORK/ok" "$WORK/ok.budget" --record-arg --sim -- \
    "$TBDPROF_BIN_DIR/mlp_train" --iterations 4 >"$WORK/ok.log" 2>&1
rc=$?
[ "$rc" = 0 ] && pass "within budget: exit 0" || fail "within budget: exit $rc: $(tail -5 "$WORK/ok.log")"
for f in trace.sqlite report.md report.html report.json junit.xml; do
    [ -s "$WORK/ok/$f" ] && pass "wrote $f" || fail "missing $f"
done
grep -q "GPU utilization" "$WORK/summary.md" && pass "markdown report appended to the job summary" || fail "job summary"
grep -q "<failure" "$WORK/ok/junit.xml" && fail "junit lists a failure within budget" || pass "junit has no failure"
# A CI job re-run in the same folder replaces the last run's files.
TBDPROF="$TBDPROF" bash "$gate" "$WORK/ok" "$WORK/ok.budget" --record-arg --sim -- \
    "$TBDPROF_BIN_DIR/mlp_train" --iterations 2 >"$WORK/again.log" 2>&1 \
    && pass "a second run into the same folder" || fail "second run: $(tail -3 "$WORK/again.log")"

TBDPROF="$TBDPROF" bash "$gate" "$WORK/tight" "$WORK/tight.budget" --record-arg --sim -- \
    "$TBDPROF_BIN_DIR/mlp_train" --iterations 4 >"$WORK/tight.log" 2>&1
rc=$?
[ "$rc" = 1 ] && pass "outside budget: exit 1" || fail "outside budget: exit $rc"
grep -q "<failure" "$WORK/tight/junit.xml" && grep -q "max-peak-memory" "$WORK/tight/junit.xml" \
    && pass "junit names the violated limit" || fail "junit: $(cat "$WORK/tight/junit.xml")"

expect_status 2 "missing budget file" -- env TBDPROF="$TBDPROF" bash "$gate" "$WORK/x" "$WORK/none" -- true
TBDPROF="$TBDPROF" bash "$gate" "$WORK/f" "$WORK/ok.budget" --record-arg --sim -- false >/dev/null 2>&1
rc=$?
[ "$rc" != 0 ] && pass "a failing command fails the step (exit $rc)" || fail "a failing command passed"
finish
