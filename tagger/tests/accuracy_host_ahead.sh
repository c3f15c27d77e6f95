#!/usr/bin/env bash
# tbdprof-tag-accuracy on a pool segment whose tenants the host allocates ahead of the GPU. A label's
# life is host times (the program's allocator call and free); a sub-range's begin is the host launch
# of its first work but its end is the device end of its last work, which runs behind the host. So a
# tensor's own sub-range looks longer than its label, and the previous tenant of its bytes, whose
# last work ends on the device just after the tensor was allocated, can match the label's life
# better. Each case is a trace and labels whose answer is known:
#   host_ahead     a gradient after a GEMM workspace at its offset (the shape of an XLA-style step)
#   clock_behind   the same, the labels' clock a little behind the trace's (a converted clock): the
#                  gradient's first use is stamped just before its label's allocation
#   unknown_before the previous tenant is one the labeller gives no category ('-')
#   never_freed    a label with no free, after a tenant whose device work ran long
#   never_used     a tensor no work touched: scored by what covers it, as before, never by a later tenant
#   merged         a tensor whose only use is a piece of a sub-range begun before its previous tenant
#                  was freed (the tagger merged the two): the life match decides, as before
#   accuracy_host_ahead.sh SCHEMA_SQL     (env: TAG_ACCURACY)
set -euo pipefail
source "$(dirname "$0")/accuracy_case_lib.sh" "$1" accuracy_host_ahead

# check NAME EXPECTED_ACCURACY SUBRANGES: scores labels $work/NAME.tsv against a trace with one pool
# segment (0x40000, 512 KiB, tagged activations) whose sub-ranges are SUBRANGES (SQL values:
# offset, bytes, begin_ns, end_ns, category), and checks the accuracy line.
check() {
    local name=$1 expected=$2 subranges=$3 db=$work/$1.sqlite
    new_trace "$db" 300000
    sqlite3 "$db" "
INSERT INTO allocations (id, process, device, address, bytes, alloc_ns, free_ns, kind)
    VALUES (1, 1, 0, 262144, 524288, 0, 300000, 'device');
INSERT INTO allocation_categories (allocation, category) VALUES (1, 'activations');
INSERT INTO allocation_subranges (allocation, offset, bytes, begin_ns, end_ns, category)
    SELECT 1, column1, column2, column3, column4, column5 FROM (VALUES $subranges);"
    local out
    out=$("$TAG_ACCURACY" "$db" "$work/$name.tsv")
    echo "$name:"
    echo "$out"
    grep -q "^accuracy $expected of " <<<"$out" || fail "$name: accuracy is not $expected"
}

# labels NAME LINE...: the labels file of case NAME, inside the segment's life; each LINE is
# EVENT OFFSET BYTES CATEGORY TRACE_NS (offset from the segment's address, in hex without 0x).
labels() {
    local name=$1
    shift
    {
        printf 'segment\t0x40000\t524288\t-\t%s\n' "$(t 1)"
        local line
        for line in "$@"; do
            read -r event offset bytes category at <<<"$line"
            printf '%s\t0x%x\t%s\t%s\t%s\n' "$event" $((0x40000 + 0x$offset)) "$bytes" "$category" "$(t "$at")"
        done
        printf 'segment_free\t0x40000\t0\t-\t%s\n' "$(t 299000)"
    } >"$work/$name.tsv"
}

# A GEMM workspace (30.0-38.0 us on the host) and then dW1 (39.0-55.1 us) at offset 0. The
# workspace's work was launched at 36.0 us and ended on the device at 43.4 us; dW1's first use was
# launched at 39.3 us and its last ended at 139.8 us. By life match the workspace's sub-range wins
# dW1's bytes (0.233 against 0.156): the scorer counted dW1 wrong though the tagger was right.
labels host_ahead "alloc 0 262144 workspace 30000" "free 0 0 - 38000" \
    "alloc 0 262144 gradients 39000" "free 0 0 - 55100"
check host_ahead 1.0000 "(0, 262144, 36000, 43400, 'workspace'), (0, 262144, 39300, 139800, 'gradients')"

# The labels' clock 100 ns behind: dW1's first use (38.9 us) stamped before its label's allocation
# (39.0 us), still after the workspace's free (38.0 us). A tensor's own first use is bounded by the
# previous tenant's free, not by its own allocation's stamp.
cp "$work/host_ahead.tsv" "$work/clock_behind.tsv"
check clock_behind 1.0000 "(0, 262144, 36000, 43400, 'workspace'), (0, 262144, 38900, 139800, 'gradients')"

# The previous tenant unknown to the labeller (not scored): its free bounds dW1's uses all the same.
labels unknown_before "alloc 0 262144 - 30000" "free 0 0 - 38000" \
    "alloc 0 262144 gradients 39000" "free 0 0 - 55100"
check unknown_before 1.0000 "(0, 262144, 36000, 43400, 'workspace'), (0, 262144, 38900, 139800, 'gradients')"

# A weight never freed (no free line) after a workspace whose device work ran until 190 us: the
# workspace's sub-range overlaps the unbounded life longer than the weight's own does.
labels never_freed "alloc 0 262144 workspace 30000" "free 0 0 - 38000" "alloc 0 262144 weights 39000"
check never_freed 1.0000 "(0, 262144, 36000, 190000, 'workspace'), (0, 262144, 39300, 130000, 'weights')"

# A tensor no work touched (60-70 us) between a workspace whose device work ended at 65 us and a
# later tenant tagged weights: it takes the workspace's category (the life match, as before; wrong,
# but right when activations and workspace count as one), never the later tenant's.
labels never_used "alloc 0 262144 workspace 40000" "free 0 0 - 50000" \
    "alloc 0 262144 activations 60000" "free 0 0 - 70000" \
    "alloc 0 262144 weights 80000" "free 0 0 - 90000"
check never_used 0.6667 "(0, 262144, 45000, 65000, 'workspace'), (0, 262144, 81000, 95000, 'weights')"
grep -q "^accuracy 1.0000 with activations and workspace counted as one" <<<"$("$TAG_ACCURACY" \
    "$work/never_used.sqlite" "$work/never_used.tsv")" || fail "never_used: a later tenant's category was taken"

# Two activations, 100-110 us and 120-150 us, whose uses the tagger merged into one sub-range begun
# at 100.5 us; a temporary of the first (begun 108 us, ended on the device at 121 us) overlaps the
# second's life. Neither is the second tensor's own: the life match gives it the merged range.
labels merged "alloc 0 4096 activations 100000" "free 0 0 - 110000" \
    "alloc 0 4096 activations 120000" "free 0 0 - 150000"
check merged 1.0000 "(0, 8192, 100500, 160000, 'activations'), (0, 4096, 108000, 121000, 'workspace')"
echo "accuracy_host_ahead: OK"
