#!/usr/bin/env bash
# tbdprof-tag-accuracy on an arena whose tensors the tagger sees twice: a set-up use before the
# training steps (a checkpoint load through the first tensor, tagged workspace) and the steps' use
# of the whole arena (optimizer_state, as labelled). The set-up lasts as long as the host takes: on a
# loaded machine it can outlast the steps' sub-range, and the score must not change with it. A pool
# tensor inside one step keeps its own sub-range against a neighbour whose extent was
# overestimated. Without labelled steps the tool falls back to the life match (overlap over union).
#   accuracy_setup_use.sh SCHEMA_SQL     (env: TAG_ACCURACY)
set -euo pipefail
source "$(dirname "$0")/accuracy_case_lib.sh" "$1" accuracy_setup_use

# make_case NAME SETUP_END_NS WITH_SPANS: a trace whose set-up use of the arena's first tensor ends
# at SETUP_END_NS (the steps' use of the arena runs from 70000 to 90000 ns).
make_case() {
    local name=$1 setup_end=$2 with_spans=$3 db=$work/$1.sqlite
    new_trace "$db" 100000
    sqlite3 "$db" "
INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, free_ns, kind)
    VALUES (1, 1, 0, 131072, 3000, 0, 100000, 'device'),   -- the arena: two optimizer_state tensors
           (2, 1, 0, 262144, 4000, 0, 100000, 'device');   -- a pool segment
INSERT INTO allocation_categories (allocation, category) VALUES (1, 'optimizer_state'), (2, 'activations');
INSERT INTO allocation_subranges (allocation, offset, bytes, begin_ns, end_ns, category)
    VALUES (1, 0, 1000, 10, $setup_end, 'workspace'),        -- the set-up use of the first tensor
           (1, 0, 3000, 70000, 90000, 'optimizer_state'),    -- the steps' use of the whole arena
           (2, 0, 1000, 71010, 71990, 'activations'),        -- the pool tensor's own sub-range
           (2, 0, 4000, 65100, 89000, 'weights');            -- a neighbour, extent overestimated
INSERT INTO iterations (process, idx, begin_ns, end_ns, source) VALUES (1, 0, 65000, 78000, 'nvtx'), (1, 1, 78000, 90000, 'nvtx');
"
    {
        printf '%s\n' \
            "segment	0x20000	3000	-	$(t 1)" \
            "alloc	0x20000	1000	optimizer_state	$(t 2)" \
            "alloc	0x203e8	2000	optimizer_state	$(t 3)" \
            "segment	0x40000	4000	-	$(t 4)"
        if [ "$with_spans" = 1 ]; then
            printf '%s\n' "span	training	0	$(t 65000)	$(t 78000)"
        fi
        printf '%s\n' "alloc	0x40000	1000	activations	$(t 71000)" "free	0x40000	0	-	$(t 72000)"
        if [ "$with_spans" = 1 ]; then
            printf '%s\n' "span	training	1	$(t 78000)	$(t 90000)"
        fi
        printf '%s\n' \
            "segment_free	0x40000	0	-	$(t 95000)" \
            "free	0x20000	0	-	$(t 95001)" \
            "free	0x203e8	0	-	$(t 95002)" \
            "segment_free	0x20000	0	-	$(t 95003)"
    } >"$work/$name.tsv"
}

score() { "$TAG_ACCURACY" "$work/$1.sqlite" "$work/$1.tsv"; }

# An idle machine (set-up 100 ns), a loaded one (set-up 60000 ns: longer than the steps' 20000 ns)
# and in between: the same answer, every labelled byte right.
for setup_end in 110 20000 40000 60000; do
    make_case "setup_$setup_end" "$setup_end" 1
    out=$(score "setup_$setup_end")
    echo "set-up use ending at $setup_end ns:"
    echo "$out"
    grep -q "^accuracy 1.0000 of 4000 labelled bytes" <<<"$out" ||
        fail "set-up use ending at $setup_end ns: not every byte right (the set-up use outvoted the steps' use?)"
done

# No labelled steps: the life match decides, as before steps were used: a short set-up use loses,
# a set-up use longer than the steps' use wins its 1000 bytes.
make_case no_spans_short 110 0
grep -q "^accuracy 1.0000 of 4000 labelled bytes" <<<"$(score no_spans_short)" || fail "no spans, short set-up: not 1.0000"
make_case no_spans_long 60000 0
grep -q "^accuracy 0.7500 of 4000 labelled bytes" <<<"$(score no_spans_long)" || fail "no spans, long set-up: not 0.7500"
echo "accuracy_setup_use: OK"
