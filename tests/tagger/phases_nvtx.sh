#!/usr/bin/env bash
# Phases found from data flow against the program's own NVTX phase ranges: the sample marks
# "forward", "backward" and "optimizer" inside each step; the trace is tagged with them, then again
# with those ranges renamed, and every phase boundary must lie within 10% of its step's duration of
# the NVTX one (counted in the step's kernels launched between the two).
#   phases_nvtx.sh PROGRAM [ARGS...]   (env: TBDPROF, TBDPROF_BIN_DIR; NVTX_FLAG, default --nvtx)
set -euo pipefail
program=$1; shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$TBDPROF" --sim -o "$work/run.sqlite" -- "$TBDPROF_BIN_DIR/$program" ${NVTX_FLAG:---nvtx} "$@" >"$work/record.log" 2>&1 ||
    { cat "$work/record.log"; exit 1; }
db="$work/run.sqlite"
names=$(sqlite3 "$db" "SELECT count(DISTINCT name) FROM ranges WHERE name IN ('forward', 'backward', 'optimizer')")
[ "$names" = 3 ] || { echo "FAIL: $program does not mark forward, backward and optimizer with NVTX"; exit 1; }
sqlite3 "$db" "CREATE TABLE nvtx_phases AS SELECT * FROM phases"
marked=$(sqlite3 "$db" "SELECT count(*) FROM nvtx_phases")
[ "$marked" -gt 0 ] || { echo "FAIL: no NVTX phases in the recording"; exit 1; }
sqlite3 "$db" "UPDATE ranges SET name = 'phase ' || id WHERE name IN ('forward', 'backward', 'optimizer')"
"$TBDPROF" tag "$db" >/dev/null
found=$(sqlite3 "$db" "SELECT count(*) FROM phases p JOIN nvtx_phases n USING (iteration, kind)")
[ "$found" = "$marked" ] || { echo "FAIL: data flow found $found of the $marked NVTX-marked phases"; exit 1; }
# Worst boundary error as a share of the step: begins of all three phases and the end of the update,
# over the steady steps (the first step also creates the optimizer state; it is reported apart). The
# error counts the step's kernels launched between the found boundary and the NVTX one, as a share
# of the step's kernels: host time between an NVTX push and the first launch after it is the
# machine's (a stall under load made one boundary 19% of a step "late" with no kernel in between).
error_sql() {  # worst boundary error as a share of the step, over the steps matching $1
    sqlite3 "$db" "WITH b(iteration, found, marked) AS (
            SELECT iteration, p.begin_ns, n.begin_ns FROM phases p JOIN nvtx_phases n USING (iteration, kind)
            UNION ALL
            SELECT iteration, p.end_ns, n.end_ns FROM phases p JOIN nvtx_phases n USING (iteration, kind)
            WHERE p.kind = 'optimizer')
        SELECT printf('%.4f', coalesce(max(
            (SELECT count(*) FROM kernel_view k WHERE k.launch_ns >= min(b.found, b.marked) AND k.launch_ns < max(b.found, b.marked))
            * 1.0 / (SELECT max(1, count(*)) FROM kernel_view k WHERE k.launch_ns >= i.begin_ns AND k.launch_ns < i.end_ns)), 0))
        FROM b JOIN iterations i ON i.id = b.iteration WHERE $1"
}
worst=$(error_sql "i.idx >= 1")
first=$(error_sql "i.idx = 0")
echo "$program $*: $found phases; worst boundary error $worst of a step (first step: $first)"
awk -v w="$worst" 'BEGIN { exit !(w <= 0.10) }' || { echo "FAIL: a boundary is off by more than 10% of its step"; exit 1; }
echo ok
