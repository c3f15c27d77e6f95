#!/usr/bin/env bash
# Say when unsure: the report says when the memory tags contradict a training
# run, and `tbdprof check --require-plausible-tags` fails on it. On a recorded mlp_train (plausible),
# the same trace with every tag turned into activations (what the tagger gave a framework it could
# not read: 0 B of weights), and a run without training iterations (no false alarm).
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}"
cd "$WORK" || exit 1
memory() {  # memory FILE.json EXPRESSION (of m = the report's "memory" object)
    python3 -c "import json,sys; m=json.load(open(sys.argv[1]))['memory']; print($2)" "$1"
}

"$TBDPROF" --sim -o train.sqlite -- "$TBDPROF_BIN_DIR/mlp_train" --iterations 6 >out 2>&1 || fail "record mlp_train: $(cat out)"
"$TBDPROF" report train.sqlite --format json -o train.json || fail "report train.sqlite"
if [ "$(memory train.json "m['tags_plausible']")" = True ]; then
    pass "mlp_train: tags plausible ($(memory train.json "m['tag_summary']"))"
else
    fail "mlp_train: $(memory train.json "m['tag_warnings']")"
fi
[ "$(memory train.json "m['low_confidence_threshold']")" = 0.7 ] && pass "JSON gives the low-confidence threshold" \
    || fail "low_confidence_threshold: $(memory train.json "m.get('low_confidence_threshold')")"
[ "$(memory train.json "all(m['low_confidence_at_peak'][c] <= m['at_peak'][c] for c in m['at_peak'])")" = True ] \
    && pass "low-confidence bytes never exceed their category's bytes" || fail "low_confidence_at_peak above at_peak"
expect_status 0 "mlp_train: check --require-plausible-tags passes" -- \
    "$TBDPROF" check train.sqlite --require-plausible-tags
grep -q "ok    require-plausible-tags" "$WORK/out" || fail "check output: $(cat "$WORK/out")"
"$TBDPROF" report train.sqlite >train.txt || fail "text report"
grep -q "WARNING" train.txt && fail "a plausible trace has a warning: $(grep WARNING train.txt)"
grep -q "low confidence" train.txt && pass "text report: low-confidence column" || fail "no low-confidence column"

# Everything activations: 0 B of weights, gradients and optimizer state.
cp train.sqlite broken.sqlite
sqlite3 broken.sqlite "UPDATE allocation_categories SET category = 'activations'; UPDATE allocation_subranges SET category = 'activations'"
"$TBDPROF" report broken.sqlite --format json -o broken.json || fail "report broken.sqlite"
[ "$(memory broken.json "m['tags_plausible']")" = False ] && pass "all activations: tags_plausible false" \
    || fail "all activations: tags_plausible $(memory broken.json "m['tags_plausible']")"
memory broken.json "'\n'.join(m['tag_warnings'])" >warnings.txt
for reason in "no weights" "no gradients"; do
    grep -q "^$reason" warnings.txt && pass "JSON reason: $reason" || fail "JSON lacks '$reason': $(cat warnings.txt)"
done
COLUMNS=200 "$TBDPROF" report broken.sqlite >broken.txt || fail "text report of broken.sqlite"
warning=$(grep -n "^WARNING: memory breakdown unreliable" broken.txt | head -1 | cut -d: -f1)
weights=$(grep -n "^weights  *0 B" broken.txt | head -1 | cut -d: -f1)
if [ -n "$warning" ] && [ -n "$weights" ] && [ "$warning" -lt "$weights" ]; then
    pass "text: the warning (line $warning) comes before '0 B' of weights (line $weights)"
else
    fail "text: warning at '${warning}', weights row at '${weights}': $(sed -n '/^Memory/,/^untagged/p' broken.txt)"
fi
grep -q "^WARNING: no weights" broken.txt && pass "text: the reason is given" || fail "text: no reason"
"$TBDPROF" report broken.sqlite --format markdown -o broken.md || fail "markdown report"
grep -q '^> \*\*Warning:\*\* memory breakdown unreliable' broken.md && pass "markdown: warning" || fail "markdown: no warning"
"$TBDPROF" report broken.sqlite --format html -o broken.html || fail "html report"
grep -q '<p class="warning"><strong>Warning:</strong> no weights' broken.html && pass "html: warning" || fail "html: no warning"
# A violated limit is a result, not an error: stdout, exit 1.
"$TBDPROF" check broken.sqlite --require-plausible-tags --junit broken.xml >"$WORK/out" 2>&1
status=$?
[ "$status" = 1 ] && pass "all activations: check --require-plausible-tags exits 1" || fail "check exit status $status"
grep -q "FAIL  require-plausible-tags" "$WORK/out" && grep -q "no weights" "$WORK/out" \
    && pass "check names the reason" || fail "check output: $(cat "$WORK/out")"
grep -q '<failure message="memory breakdown unreliable' broken.xml && pass "JUnit: failure" || fail "JUnit: $(cat broken.xml)"

# A single step: no training iterations, nothing to contradict.
"$TBDPROF" --sim -o one.sqlite -- "$TBDPROF_BIN_DIR/mlp_train" --iterations 1 >out 2>&1 || fail "record one step: $(cat out)"
"$TBDPROF" report one.sqlite --format json -o one.json || fail "report one.sqlite"
if [ "$(python3 -c "import json; print(json.load(open('one.json'))['iterations']['detected'])")" = 0 ]; then
    [ "$(memory one.json "m['tags_plausible']")" = True ] && [ "$(memory one.json "len(m['tag_warnings'])")" = 0 ] \
        && pass "one step: no false alarm" || fail "one step: $(memory one.json "m['tag_warnings']")"
    memory one.json "m['tag_remarks']" | grep -q "no training iterations" && pass "one step: says what it could not check" \
        || fail "one step remarks: $(memory one.json "m['tag_remarks']")"
    expect_status 0 "one step: check --require-plausible-tags passes" -- \
        "$TBDPROF" check one.sqlite --require-plausible-tags
else
    fail "mlp_train --iterations 1 has iterations: pick another run without steps"
fi
finish
