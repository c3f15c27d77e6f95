#!/usr/bin/env bash
# The trace commands on a recorded run: report in every format, check, diff, compare, tag, and an
# export -> import round trip that keeps kernels, copies, sets and NVTX steps.
source "$(dirname "$0")/common.sh"
a="$WORK/a.sqlite"; b="$WORK/b.sqlite"
"$TBDPROF" --sim -o "$a" -- "$TBDPROF_BIN_DIR/mlp_train" --iterations 6 --nvtx >/dev/null 2>&1 || fail "recording a"
"$TBDPROF" --sim -o "$b" -- "$TBDPROF_BIN_DIR/mlp_train" --iterations 6 --nvtx --optimizer adam >/dev/null 2>&1 || fail "recording b"
for format in text markdown json html; do
    "$TBDPROF" report "$a" --format $format -o "$WORK/report.$format" && [ -s "$WORK/report.$format" ] \
        && pass "report --format $format" || fail "report --format $format"
done
python3 -c "import json,sys; it=json.load(open(sys.argv[1]))['iterations']; assert (it['detected'], it['count']) == (6, 5), it" \
    "$WORK/report.json" && pass "json report: 6 iterations detected, 5 in the steady window" || fail "json report iterations"
expect_status 0 "check within budget" -- "$TBDPROF" check "$a" --max-peak-memory 1GiB
"$TBDPROF" check "$a" --max-peak-memory 1MiB --junit "$WORK/junit.xml" >"$WORK/check" 2>&1
[ $? = 1 ] && grep -q "max-peak-memory" "$WORK/check" && pass "check outside budget: exit 1, violation listed" \
    || fail "check outside budget: $(cat "$WORK/check")"
grep -q "<failure" "$WORK/junit.xml" && pass "junit lists the violation" || fail "junit"
"$TBDPROF" diff "$a" "$b" >"$WORK/diff" && grep -qi "optimizer_state" "$WORK/diff" && pass "diff shows the optimizer state change" \
    || fail "diff: $(head -5 "$WORK/diff")"
"$TBDPROF" compare "$a" "$b" >"$WORK/compare" && pass "compare" || fail "compare"
"$TBDPROF" tag "$a" | grep -q "iterations (from nvtx)" && pass "tag finds the NVTX steps" || fail "tag"
"$TBDPROF" export "$a" --format chrome -o "$WORK/a.json" >/dev/null && pass "export" || fail "export"
"$TBDPROF" import "$WORK/a.json" -o "$WORK/re.sqlite" >/dev/null 2>&1 && pass "re-import" || fail "re-import"
for table in kernels copies sets; do
    q="SELECT count(*), coalesce(sum(duration_ns), 0) FROM $table"
    [ "$(sqlite3 "$a" "$q")" = "$(sqlite3 "$WORK/re.sqlite" "$q")" ] && pass "round trip keeps $table" \
        || fail "round trip $table: $(sqlite3 "$a" "$q") vs $(sqlite3 "$WORK/re.sqlite" "$q")"
done
steps=$(sqlite3 "$WORK/re.sqlite" "SELECT count(*) FROM ranges WHERE name = 'step'")
[ "$steps" = 6 ] && pass "round trip keeps the 6 step ranges" || fail "round trip steps: $steps"
finish
