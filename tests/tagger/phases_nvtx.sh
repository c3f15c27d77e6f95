#!/usr/bin/env bash
# Phases found from data flow against the program's own NVTX phase ranges: the sample marks
# "forward", "backward" and "optimizer" inside each step; the trace is tagged with them, then again
# with those ranges renamed, and every phase boundary must lie within 10% of its step's duration of
# the NVTX one.
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
# over the steady steps (the first step also creates the optimizer state; it is reported apart).
error_sql() {  # worst boundary error as a share of the step, over the steps matching $1
    sqlite3 "$db" "SELECT printf('%.4f', coalesce(max(max(abs(p.begin_ns - n.begin_ns),
            CASE WHEN p.kind = 'optimizer' THEN abs(p.end_ns - n.end_ns) ELSE 0 END) * 1.0 / (i.end_ns - i.begin_ns)), 0))
        FROM phases p JOIN nvtx_phases n USING (iteration, kind) JOIN iterations i ON i.id = p.iteration WHERE $1"
}
worst=$(error_sql "i.idx >= 1")
first=$(error_sql "i.idx = 0")
echo "$program $*: $found phases; worst boundary error $worst of a step (first step: $first)"
awk -v w="$worst" 'BEGIN { exit !(w <= 0.10) }' || { echo "FAIL: a boundary is off by more than 10% of its step"; exit 1; }
echo ok
