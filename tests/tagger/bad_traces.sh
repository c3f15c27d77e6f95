#!/usr/bin/env bash
# `tbdprof tag` on traces that give little evidence, and on things that are not traces: it tags what
# the evidence supports, says why for the rest, and never crashes or damages the file.
set -uo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok:   $*"; }
record() { "$TBDPROF" --sim -o "$work/$1.sqlite" -- "$TBDPROF_BIN_DIR/${@:2}" >"$work/$1.log" 2>&1 || fail "recording $1"; }

record one_step mlp_train --iterations 1
out=$("$TBDPROF" tag "$work/one_step.sqlite") || fail "tag on a one-step run exited $?"
grep -q "no iterations" <<<"$out" && ok "one step: says there are no iterations" || fail "one step: $out"
untagged=$(sqlite3 "$work/one_step.sqlite" "SELECT count(*) FROM memory_allocations WHERE category IS NULL")
[ "$untagged" = 0 ] && ok "one step: every allocation has a category" || fail "one step: $untagged untagged"
reasons=$(sqlite3 "$work/one_step.sqlite" "SELECT count(*) FROM allocation_categories c LEFT JOIN strings r ON r.id = c.reason_string
    WHERE c.category = 'other' AND coalesce(c.reason, r.text, '') = ''")
[ "$reasons" = 0 ] && ok "one step: every 'other' has a reason" || fail "one step: $reasons without reason"

record steps mlp_train --iterations 6
cp "$work/steps.sqlite" "$work/no_args.sqlite"
sqlite3 "$work/no_args.sqlite" "DELETE FROM kernel_allocations"
"$TBDPROF" tag "$work/no_args.sqlite" >/dev/null || fail "tag without argument information exited $?"
n=$(sqlite3 "$work/no_args.sqlite" "SELECT count(*) FROM memory_allocations WHERE category IS NULL")
[ "$n" = 0 ] && ok "no argument information: tagged" || fail "no argument information: $n untagged"

cp "$work/steps.sqlite" "$work/outlive.sqlite"
sqlite3 "$work/outlive.sqlite" "UPDATE allocations SET free_ns = NULL WHERE bytes >= 65536"
"$TBDPROF" tag "$work/outlive.sqlite" >/dev/null || fail "tag with allocations outliving the run exited $?"
w=$(sqlite3 "$work/outlive.sqlite" "SELECT count(*) FROM memory_allocations WHERE category = 'weights'")
[ "$w" -gt 0 ] && ok "allocations outliving the run: weights still found ($w)" || fail "outlive: no weights"

"$TBDPROF" tag "$work/steps.sqlite" >/dev/null && ok "tagging twice" || fail "tagging twice"
n=$(sqlite3 "$work/steps.sqlite" "SELECT count(*) - count(DISTINCT allocation) FROM allocation_categories")
[ "$n" = 0 ] && ok "tagging twice replaces the results" || fail "tagging twice left $n duplicates"

# An older trace of the same format: tables added later missing (phases, allocation_subranges), and
# iterations as written before its columns device_begin_ns, device_end_ns and kind. Tagging brings
# them to schemas/trace.sql's definition, and the file stays a trace every reader opens.
cp "$work/steps.sqlite" "$work/older.sqlite"
sqlite3 "$work/older.sqlite" "DROP TABLE phases; DROP TABLE allocation_subranges; DROP TABLE iterations;
    CREATE TABLE iterations (id INTEGER PRIMARY KEY, process INTEGER NOT NULL, idx INTEGER NOT NULL,
        begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, source TEXT NOT NULL -- 'nvtx', 'repetition'
    );"
schema() { sqlite3 "$1" "SELECT group_concat(name || ' ' || type) FROM pragma_table_info('iterations');
    SELECT sql FROM sqlite_schema WHERE name = 'phases'"; }
"$TBDPROF" tag "$work/older.sqlite" >/dev/null && "$TBDPROF" report "$work/older.sqlite" >/dev/null \
    && [ "$(schema "$work/older.sqlite")" = "$(schema "$work/steps.sqlite")" ] \
    && ok "older trace: tagged, its tables as the schema has them" || fail "older trace: $(schema "$work/older.sqlite")"

# Built before the builder stored the copies' and library calls' allocations: tagged, and told so.
cp "$work/steps.sqlite" "$work/pre_operands.sqlite"
sqlite3 "$work/pre_operands.sqlite" "ALTER TABLE copies DROP COLUMN src_allocation; ALTER TABLE copies DROP COLUMN dst_allocation;
    ALTER TABLE sets DROP COLUMN dst_allocation; ALTER TABLE library_calls DROP COLUMN a_allocation;
    ALTER TABLE library_calls DROP COLUMN b_allocation; ALTER TABLE library_calls DROP COLUMN c_allocation;
    ALTER TABLE library_calls DROP COLUMN workspace_allocation;"
out=$("$TBDPROF" tag "$work/pre_operands.sqlite") && grep -q "rebuild it from its run" <<<"$out" \
    && ! "$TBDPROF" tag "$work/steps.sqlite" | grep -q "rebuild it" \
    && ok "trace without operand allocations: tagged, and the summary says to rebuild" || fail "pre-operands: $out"

# A failure while writing reaches the user in one line and leaves the trace as it was: another
# writer holds the file (tagging waits 2 s for it).
cp "$work/steps.sqlite" "$work/busy.sqlite"
before=$(md5sum <"$work/busy.sqlite")
(echo "BEGIN IMMEDIATE;"; sleep 5; echo "ROLLBACK;") | sqlite3 "$work/busy.sqlite" & holder=$!
# Until the holder has the lock (a fixed sleep lost that race on a loaded machine): a writer that does
# not wait is refused.
for _ in $(seq 50); do
    sqlite3 -cmd ".timeout 0" "$work/busy.sqlite" "BEGIN IMMEDIATE; ROLLBACK;" >/dev/null 2>&1 || break
    sleep 0.05
done
"$TBDPROF" tag "$work/busy.sqlite" 2>"$work/err" >/dev/null; rc=$?
wait $holder
[ $rc -ne 0 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q "locked" "$work/err" && ok "busy trace: one message, exit $rc" \
    || fail "busy trace: exit $rc, $(cat "$work/err")"
[ "$(md5sum <"$work/busy.sqlite")" = "$before" ] && ok "busy trace: file unchanged" || fail "busy trace: file changed"

# A pool segment: kernels point into one allocation at many offsets (a caching allocator's block).
# The largest allocation a kernel outside library calls already points into (not a library handle's
# own workspace, which such kernels never reach: the tagger takes pointers into it for stale words).
cp "$work/steps.sqlite" "$work/pooled.sqlite"
sqlite3 "$work/pooled.sqlite" "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 19)
    INSERT OR IGNORE INTO kernel_allocations SELECT (SELECT min(id) FROM kernels) + i, 90, 0,
        (SELECT a.id FROM allocations AS a WHERE a.id IN (SELECT ka.allocation FROM kernel_allocations AS ka
             JOIN kernels AS k ON k.id = ka.kernel WHERE k.library_call IS NULL) ORDER BY a.bytes DESC LIMIT 1),
        i * 4096, 0 FROM n"
out=$("$TBDPROF" tag "$work/pooled.sqlite")
grep -q "pooled segments" <<<"$out" && ok "pooled segment: tag says the breakdown is at segment level" || fail "pooled: $out"
# Whether tensors can be recovered from the made-up pointers depends on where the steps begin; either
# way the report must say that the breakdown is not per allocation there.
"$TBDPROF" report "$work/pooled.sqlite" | grep -Eq "memory breakdown at (segment|sub-range) level" \
    && ok "pooled segment: the report says so" || fail "pooled: report lacks the segment-level note"

echo "not a trace" >"$work/text.sqlite"
before=$(md5sum <"$work/text.sqlite")
"$TBDPROF" tag "$work/text.sqlite" 2>"$work/err"; rc=$?
[ $rc -ne 0 ] && [ "$(wc -l <"$work/err")" = 1 ] && ok "not a trace: one message, exit $rc" || fail "not a trace: exit $rc, $(cat "$work/err")"
[ "$(md5sum <"$work/text.sqlite")" = "$before" ] && ok "not a trace: file unchanged" || fail "not a trace: file changed"
"$TBDPROF" tag "$work/missing.sqlite" 2>/dev/null; rc=$?
[ $rc -ne 0 ] && [ ! -e "$work/missing.sqlite" ] && ok "missing file: exit $rc, nothing created" || fail "missing file"
"$TBDPROF" tag 2>/dev/null; [ $? = 2 ] && ok "no trace: usage error" || fail "no trace: not exit 2"
"$TBDPROF" tag --bogus x 2>/dev/null; [ $? = 2 ] && ok "unknown option: usage error" || fail "unknown option"

[ $failures = 0 ] && echo "all passed" || { echo "$failures failure(s)"; exit 1; }
