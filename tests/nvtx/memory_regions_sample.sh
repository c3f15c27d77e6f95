#!/usr/bin/env bash
# Records samples/nvtx_pool_train (an arena that registers every tensor as a named NVTX memory
# region) with its true labels, and checks:
#   - the regions recorded are the tensors the program labelled (one row per label `alloc`, same
#     address and bytes, registered right after the label), the heap is the arena's allocation;
#   - every region whose name begins with a category is tagged that category by `nvtx-region-name`,
#     the others by the ordinary rules; every region's tag is its label's category where named;
#   - tagging accuracy on the labels >= MIN_ACCURACY (0.99);
#   - with --last-batch: the two input regions resized (a 'resized' row, then the new size);
#     with --names plain: no region named with a category, tagged by the rules alone.
#   memory_regions_sample.sh [SAMPLE ARGS...]     (env: MIN_ACCURACY, default 0.99)
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}" "${TAG_ACCURACY:?}"
cd "$WORK" || exit 1
args=("$@")
TBD_SAMPLE_LABELS="$WORK/labels.tsv" "$TBDPROF" --sim -o trace.sqlite -- "$TBDPROF_BIN_DIR/nvtx_pool_train" \
    "${args[@]}" >out 2>err
status=$?
[ "$status" -eq 0 ] || { cat err; fail "tbdprof/nvtx_pool_train exited $status"; finish; }

# Labels as decimal addresses and absolute times: kind, address, bytes, category, ts.
while IFS=$'\t' read -r kind address bytes category ts; do
    [ "$kind" = span ] && continue
    printf '%s\t%d\t%s\t%s\t%s\n' "$kind" "$((address))" "$bytes" "$category" "$ts"
done <labels.tsv >labels.dec

checks=$(script <<SQL
ATTACH 'trace.sqlite' AS t;
CREATE TABLE label(kind TEXT, address INTEGER, bytes INTEGER, category TEXT, ts INTEGER);
.mode tabs
.import labels.dec label
CREATE TABLE region AS
    SELECT r.*, r.register_ns + run.start_monotonic_ns AS abs_ns,
           (SELECT l.category FROM label l WHERE l.kind = 'alloc' AND l.address = r.address AND l.bytes = r.bytes
              AND l.ts <= r.register_ns + run.start_monotonic_ns ORDER BY l.ts DESC LIMIT 1) AS truth
    FROM t.memory_regions r, t.run;
CREATE TABLE tagged AS
    SELECT g.id AS region, g.name, g.truth, s.category, s.rule FROM region g
    JOIN t.allocations a ON a.id = g.allocation
    JOIN t.allocation_subranges s ON s.allocation = a.id AND s.offset = g.address - a.address AND s.begin_ns = g.register_ns;
SELECT 'count', (SELECT count(*) FROM label WHERE kind = 'alloc'), (SELECT count(*) FROM region);
SELECT 'unlabelled', id, name, address, bytes FROM region WHERE truth IS NULL;
SELECT 'heap', (SELECT count(*) FROM t.memory_heaps h JOIN label l ON l.kind = 'segment' AND l.address = h.address
                AND l.bytes = h.bytes WHERE h.allocation IS NOT NULL AND h.device = 0 AND h.usage = 'sub_allocator');
SELECT 'outside', id FROM region WHERE allocation IS NULL OR device != 0;
SELECT 'untagged', id, name FROM region WHERE id NOT IN (SELECT region FROM tagged);
SELECT 'named', count(*) FROM region WHERE name GLOB '[a-z]*:*';
SELECT 'by-name', count(*) FROM tagged WHERE rule = 'nvtx-region-name';
SELECT 'wrong-name-tag', region, name, category FROM tagged
    WHERE name GLOB '[a-z]*:*' AND (rule != 'nvtx-region-name' OR category != substr(name, 1, instr(name, ':') - 1));
SELECT 'wrong-truth', region, name, truth, category FROM tagged WHERE rule = 'nvtx-region-name' AND category != truth;
SELECT 'resized', count(*) FROM region WHERE end_reason = 'resized';
SELECT 'ended', count(*) FROM region WHERE end_reason IS NULL OR end_reason NOT IN ('unregistered', 'resized');
SQL
)
field() { grep "^$1"$'\t' <<<"$checks" | cut -f2-; }
expect_none "no SQL errors" "$(grep '^SQL-ERROR' <<<"$checks")"
read -r labelled recorded <<<"$(field count)"
expect_equal "one region per labelled tensor" "$recorded" "$labelled"
[ "${recorded:-0}" -gt 50 ] || fail "too few regions ($recorded)"
expect_none "every region is a labelled tensor (address, bytes, registered after its label)" "$(field unlabelled)"
expect_equal "the heap is the arena: its allocation on device 0" "$(field heap)" 1
expect_none "every region lies in the arena's allocation" "$(field outside)"
expect_none "every region is a tagged tensor (allocation_subranges)" "$(field untagged)"
expect_none "a category in the name is the tag, by nvtx-region-name" "$(field wrong-name-tag)"
expect_none "the name's category is the true one" "$(field wrong-truth)"
expect_equal "regions tagged by name = regions named with a category" "$(field by-name)" "$(field named)"
expect_equal "every region unregistered by the program (or resized)" "$(field ended)" 0
if [[ " ${args[*]} " == *" --names plain "* ]]; then
    expect_equal "--names plain: no name carries a category" "$(field named)" 0
else
    named=$(field named)
    [ "${named:-0}" -gt 30 ] && pass "regions named with a category ($named)" || fail "too few named regions ($named)"
fi
if [[ " ${args[*]} " == *" --last-batch "* ]]; then
    expect_equal "--last-batch: both input regions resized" "$(field resized)" 2
else
    expect_equal "no region resized" "$(field resized)" 0
fi
note=$(query trace.sqlite "SELECT value FROM run_notes WHERE key = 'memory_breakdown'")
[[ "$note" == *"regions the program registered"* ]] && pass "the breakdown note counts the regions" \
    || fail "the breakdown note does not count the regions: $note"
"$TBDPROF" report trace.sqlite --format json -o report.json >/dev/null 2>&1 || fail "tbdprof report failed"
named_tagged=$(query trace.sqlite "SELECT count(*) FROM allocation_subranges WHERE rule = 'nvtx-region-name'")
grep -q "the program registered $recorded regions (tensors) inside allocations (NVTX memory extension); $named_tagged tensors tagged" \
    report.json && pass "the report counts the regions and those tagged by name" \
    || fail "the report does not count the regions: $(grep -o '"notes"[^]]*' report.json | head -c 600)"
"$TAG_ACCURACY" trace.sqlite labels.tsv --min "${MIN_ACCURACY:-0.99}" >accuracy.out 2>&1 \
    && pass "accuracy: $(grep -m1 -i 'bytes' accuracy.out)" || fail "accuracy below ${MIN_ACCURACY:-0.99}: $(cat accuracy.out)"
finish
