#!/usr/bin/env bash
# Records graph_nodes_program (graphs built by hand: a child graph of two long kernels, an event record
# node after it and an event wait node in a second graph on another stream, a host node, and
# cudaGraphExecUpdate) and compares the trace with the simulated GPU's ground truth: every kernel of
# every replay (process, start, end, name), child graphs' kernels included, each tied to its graph
# launch; the kernel after the wait node starts after the child graph's kernels end. Not compared: the
# launch configuration, which the trace does not have for graphs built by hand (docs/collector.md).
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}"
replays=3
cd "$WORK" || exit 1
TBDSIM_TRUTH="$WORK/truth.tsv" "$TBDPROF" --sim -o "$WORK/trace.sqlite" -- \
    "$TBDPROF_BIN_DIR/cli_graph_nodes_program" $replays >"$WORK/out" 2>"$WORK/err"
status=$?
[ "$status" -eq 0 ] || fail "tbdprof exited $status: $(cat "$WORK/err")"
[ -s "$WORK/trace.sqlite" ] || { fail "no trace"; finish; }
grep -q "^host calls: $((replays + 1))$" "$WORK/out" && pass "the host node ran once per replay" ||
    fail "host calls: $(cat "$WORK/out")"
q() { sqlite3 "$WORK/trace.sqlite" "$1"; }
awk -F'\t' '$1 == "kernel" { print $2, $5, $6, $12 }' "$WORK/truth.tsv" | sort >"$WORK/truth_kernels"
q "SELECT p.pid || ' ' || (k.start_ns + r.start_monotonic_ns) || ' ' || (k.end_ns + r.start_monotonic_ns) || ' ' ||
   k.mangled FROM kernel_view k JOIN processes p ON p.id = k.process, run r" | sort >"$WORK/trace_kernels"
[ -s "$WORK/truth_kernels" ] && diff "$WORK/truth_kernels" "$WORK/trace_kernels" >"$WORK/kernel_diff" &&
    pass "every kernel as the truth has it ($(wc -l <"$WORK/truth_kernels"))" ||
    fail "kernels differ from the truth: $(head -5 "$WORK/kernel_diff")"
expect_truth() {  # expect_truth DESCRIPTION WANT AWK_PROGRAM
    local got
    got=$(awk -F'\t' "$3" "$WORK/truth.tsv")
    if [ "$got" = "$2" ]; then pass "$1 ($got)"; else fail "$1: got '$got', want '$2'"; fi
}
expect_truth "no copy or set" 0 '$1 == "memcpy" || $1 == "memset" { n++ } END { print n + 0 }'
# The update reached the simulated GPU: the first kernel's grid, 4 before, 8 in the last replay.
expect_truth "the update changed the first kernel's grid in the last producer replay only" "4:$replays 8:1" \
    '$1 == "kernel" && $12 ~ /scale/ && $8 !~ /^264000/ { split($8, g, ","); n[g[1]]++ }
     END { print "4:" n[4] + 0, "8:" n[8] + 0 }'

expect() {  # expect DESCRIPTION WANT SQL
    local got
    got=$(q "$3")
    if [ "$got" = "$2" ]; then pass "$1 ($got)"; else fail "$1: got '$got', want '$2'"; fi
}
launches=$((2 * (replays + 1)))
expect "graph launches" $launches "SELECT count(*) FROM graph_launches"
expect "kernels per replay (the consumer's one; the producer's first and its child graph's two)" "1 3" \
    "SELECT group_concat(kernels, ' ') FROM (SELECT DISTINCT kernels FROM graph_launches ORDER BY kernels)"
expect "every kernel tied to its graph launch" "$((4 * (replays + 1)))|0" \
    "SELECT count(graph_launch), count(*) - count(graph_launch) FROM kernels"
# The wait node: no add kernel starts before a scale kernel of an earlier graph launch has ended.
expect "the kernel after the wait node follows the child graph's kernels" 0 \
    "SELECT count(*) FROM kernel_view k JOIN kernel_view s ON s.graph_launch < k.graph_launch
     WHERE k.name LIKE 'add%' AND s.name LIKE 'scale%' AND k.start_ns < s.end_ns"
expect "and the child graph's kernels are long enough to show it" 8 \
    "SELECT count(*) FROM kernel_view WHERE name LIKE 'scale%' AND end_ns - start_ns >= 500000"

# An executable of a captured graph updated to another captured graph: its replays after the update
# are matched to the new graph's captured launch, so their kernels' edges are the new graph's memory.
"$TBDPROF" --sim -o "$WORK/update.sqlite" -- "$TBDPROF_BIN_DIR/cli_graph_nodes_program" --capture-update \
    >"$WORK/out" 2>"$WORK/err" || fail "capture-update: $(cat "$WORK/err")"
got=$(sqlite3 "$WORK/update.sqlite" "SELECT group_concat(a.bytes, ' ') FROM (SELECT k.id, k.start_ns FROM kernels k
      WHERE k.graph_launch IS NOT NULL ORDER BY k.start_ns) k JOIN kernel_allocations e ON e.kernel = k.id
      JOIN allocations a ON a.id = e.allocation")
[ "$got" = "1048576 2097152" ] && pass "after cudaGraphExecUpdate the replay's kernel writes the new graph's memory" ||
    fail "edges of the two replays: '$got', want '1048576 2097152'"
finish
