#!/usr/bin/env bash
# Records graph_replay (kernels and a memset captured into a CUDA graph, replayed N times with an
# ordinary launch between replays) and compares the trace with the simulated GPU's ground truth:
# every kernel, set and copy exactly as the truth has them (so no captured launch is counted as a
# kernel), each replayed kernel tied to its graph launch and thread, with its captured launch's edges.
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}" "${TRACE_VS_TRUTH:?}"
replays=4
nodes=3  # kernels per replay (the memset is the fourth node)
cd "$WORK" || exit 1
TBDSIM_TRUTH="$WORK/truth.tsv" "$TBDPROF" --sim -o "$WORK/trace.sqlite" -- \
    "$TBDPROF_BIN_DIR/graph_replay" --replays $replays >"$WORK/out" 2>"$WORK/err"
status=$?
cat "$WORK/err"
[ "$status" -eq 0 ] || fail "tbdprof exited $status"
[ -s "$WORK/trace.sqlite" ] || { fail "no trace"; finish; }
"$TRACE_VS_TRUTH" "$WORK/trace.sqlite" "$WORK/truth.tsv" || fail "trace differs from the truth"

q() { sqlite3 "$WORK/trace.sqlite" "$1"; }
expect() {  # expect DESCRIPTION WANT SQL
    local got
    got=$(q "$3")
    if [ "$got" = "$2" ]; then pass "$1 ($got)"; else fail "$1: got '$got', want '$2'"; fi
}
# The truth marks replayed kernels with two more fields (graph id, node id).
truth_replayed=$(awk -F'\t' '$1 == "kernel" && NF == 14' "$WORK/truth.tsv" | wc -l)
[ "$truth_replayed" -eq $((replays * nodes)) ] || fail "truth has $truth_replayed replayed kernels"
expect "graph launches" $replays "SELECT count(*) FROM graph_launches"
expect "kernels per replay" "$nodes" "SELECT DISTINCT kernels FROM graph_launches"
expect "replayed kernels" $((replays * nodes)) "SELECT count(*) FROM kernels WHERE graph_launch IS NOT NULL"
expect "ordinary kernels" $((replays + 1)) "SELECT count(*) FROM kernels WHERE graph_launch IS NULL"
expect "replayed kernels on the launching thread and stream, after the launch" 0 \
    "SELECT count(*) FROM kernels k JOIN graph_launches g ON g.id = k.graph_launch
     WHERE k.thread IS NOT g.thread OR k.stream IS NOT g.stream OR k.start_ns - k.queued_ns != g.launch_ns
        OR k.queued_ns < 0"
expect "one correlation id per replay" $replays \
    "SELECT count(DISTINCT correlation) FROM kernels WHERE graph_launch IS NOT NULL"
expect "replayed sets" $replays "SELECT count(*) FROM sets WHERE start_ns > (SELECT min(launch_ns) FROM graph_launches)"
# Edges come from the captured launches: scale(a), add(a, b, out), scale(out) = 5 per replay.
expect "edges of replayed kernels" $((replays * 5)) \
    "SELECT count(*) FROM kernel_allocations e JOIN kernels k ON k.id = e.kernel WHERE k.graph_launch IS NOT NULL"
expect "add reads a and b, writes out" "$replays" \
    "SELECT count(*) FROM kernel_view k WHERE k.name LIKE 'add%' AND
     (SELECT count(*) FROM kernel_allocations e WHERE e.kernel = k.id) = 3"
expect "run notes" "graph_replays=$replays captured_launches=$nodes" \
    "SELECT group_concat(key || '=' || value, ' ') FROM run_notes WHERE key IN ('graph_replays', 'captured_launches')"
finish
