#!/usr/bin/env bash
# Imports are tagged. A Kineto trace with [memory] events is tagged by lifetimes and
# named ranges (lower confidence), so that its peak is not "untagged"; a torch.profiler memory
# timeline keeps PyTorch's own categories, with PyTorch named as the rule. On small made-up traces
# (interop/tests/data) and, when present, on the real ones of the validation data.
#   import_tagged.sh DATA_DIR VALIDATION_DATA_DIR
source "$(dirname "$0")/common.sh"
data=$1 validation=${TBDPROF_VALIDATION_DATA:-$2}
cd "$WORK" || exit 1
q() { sqlite3 "$1" "$2"; }
untagged_at_peak() {
    "$TBDPROF" report "$1" --format json | python3 -c "import json,sys; m=json.load(sys.stdin)['memory']; print(m['at_peak']['untagged'], m['peak_bytes'])"
}

"$TBDPROF" import "$data/small_kineto_memory.json" -o k.sqlite >out.txt 2>&1 || fail "import kineto: $(cat out.txt)"
grep -q "memory tagged by lifetimes" out.txt && pass "import says how it tagged" || fail "import output: $(cat out.txt)"
[ "$(q k.sqlite "SELECT count(*) FROM allocations a LEFT JOIN allocation_categories c ON c.allocation = a.id WHERE c.category IS NULL")" = 0 ] \
    && pass "kineto: every allocation tagged" || fail "kineto: untagged allocations"
[ "$(q k.sqlite "SELECT category FROM allocation_categories WHERE allocation = 1")" = weights ] \
    && pass "kineto: the block alive across the steps is weights" || fail "kineto: $(q k.sqlite "SELECT * FROM allocation_categories")"
[ "$(q k.sqlite "SELECT count(*) FROM allocation_categories WHERE category = 'activations'")" = 2 ] \
    && pass "kineto: the step-local blocks are activations" || fail "kineto: $(q k.sqlite "SELECT * FROM allocation_categories")"
[ "$(q k.sqlite "SELECT count(*) FROM allocation_categories WHERE confidence >= 0.9")" = 0 ] \
    && pass "kineto: lower confidence without kernel arguments" || fail "kineto: confident tags from lifetimes alone"
read -r untagged peak < <(untagged_at_peak k.sqlite)
[ "$untagged" = 0 ] && [ "$peak" -gt 0 ] && pass "kineto: nothing untagged at the peak ($peak B)" || fail "kineto: $untagged of $peak B untagged"

"$TBDPROF" import "$data/small_memory_timeline.json" -o m.sqlite >out.txt 2>&1 || fail "import timeline: $(cat out.txt)"
got=$(q m.sqlite "SELECT group_concat(a.bytes || ':' || c.category || ':' || c.rule, ' ') FROM allocations a JOIN allocation_categories c ON c.allocation = a.id WHERE c.rule = 'pytorch-memory-timeline' ORDER BY a.id")
for want in 4194304:weights 2097152:optimizer_state 1048576:activations 4194304:gradients; do
    [[ " $got " == *" $want:pytorch-memory-timeline "* ]] || fail "timeline: $want missing from '$got'"
done
[ "$(q m.sqlite "SELECT count(*) FROM allocation_categories WHERE rule = 'pytorch-memory-timeline'")" = 4 ] \
    && pass "timeline: PyTorch's four categories kept, PyTorch named as the rule" || fail "timeline: $got"
q m.sqlite "SELECT reason FROM allocation_categories WHERE rule = 'pytorch-memory-timeline' LIMIT 1" | grep -q PyTorch \
    && pass "timeline: the reason names PyTorch" || fail "timeline reason"
[ "$(q m.sqlite "SELECT count(*) FROM allocation_categories WHERE allocation = 4 AND rule <> 'pytorch-memory-timeline'")" = 1 ] \
    && pass "timeline: the block PyTorch left unknown is tagged by the tagger" || fail "timeline: unknown block: $(q m.sqlite "SELECT * FROM allocation_categories WHERE allocation = 4")"
read -r untagged peak < <(untagged_at_peak m.sqlite)
[ "$untagged" = 0 ] && pass "timeline: nothing untagged at the peak" || fail "timeline: $untagged B untagged at the peak"

if [ -d "$validation" ]; then
    for f in "$validation"/kineto/*.pt.trace.json.gz; do
        [ -e "$f" ] || continue
        "$TBDPROF" import "$f" -o real.sqlite --force -q || { fail "import $(basename "$f")"; continue; }
        read -r untagged peak < <(untagged_at_peak real.sqlite)
        [ "$untagged" = 0 ] && [ "$peak" -gt 0 ] && pass "$(basename "$f"): peak $peak B, none untagged" \
            || fail "$(basename "$f"): $untagged of $peak B untagged at the peak"
    done
    if [ -e "$validation/hta/memory_timeline.raw.gz" ]; then
        "$TBDPROF" import "$validation/hta/memory_timeline.raw.gz" -o real-mt.sqlite --force -q || fail "import memory_timeline.raw.gz"
        n=$(q real-mt.sqlite "SELECT count(*) FROM allocation_categories WHERE rule = 'pytorch-memory-timeline'")
        read -r untagged peak < <(untagged_at_peak real-mt.sqlite)
        [ "$n" -gt 0 ] && [ "$untagged" = 0 ] && pass "memory_timeline.raw.gz: $n of PyTorch's categories kept, none untagged at the peak" \
            || fail "memory_timeline.raw.gz: $n PyTorch categories, $untagged B untagged"
    fi
else
    echo "note: no validation data at $validation: the real traces are not checked"
fi
finish
