#!/usr/bin/env bash
# A trace file is untrusted input: every command opens traces through the one opener
# (trace/trace_reader.cpp), which refuses what tbdprof did not write; `tag` writes only to a trace
# it validated. Each hostile copy must be refused within seconds, with one line, the file unchanged.
source "$(dirname "$0")/../cli/common.sh"
: "${TBDPROF_BIN_DIR:?}"
command -v sqlite3 >/dev/null || { echo "SKIP: the sqlite3 shell is not installed"; exit 0; }
cd "$WORK" || exit 1
"$TBDPROF" --sim -o good.sqlite -- "$TBDPROF_BIN_DIR/mlp_train" --iterations 2 >/dev/null 2>&1 || fail "cannot record"
kernels=$(sqlite3 good.sqlite "SELECT count(*) FROM kernels")
[ "$kernels" -gt 0 ] || fail "the good trace has no kernels"
"$TBDPROF" tag good.sqlite >/dev/null 2>&1 || fail "tag refuses a good trace"

# make NAME SQL: a copy of the good trace changed by SQL (run without tbdprof's defences).
make() { cp good.sqlite "$1.sqlite" && sqlite3 "$1.sqlite" "$2" || fail "cannot make $1"; }
make trigger "CREATE TRIGGER wipe AFTER INSERT ON allocation_categories BEGIN DELETE FROM kernels; UPDATE run SET command_line = 'owned'; END;"
make trigger_on_read "CREATE TABLE log (x); CREATE TRIGGER t2 AFTER INSERT ON iterations BEGIN INSERT INTO log SELECT randomblob(1000000) FROM kernels; END;"
make view_blob "DROP VIEW kernel_view; ALTER TABLE kernels RENAME TO k0; CREATE VIEW kernels AS SELECT *, randomblob(900000000) AS pad FROM k0;"
make view_recursive "DROP VIEW kernel_view; ALTER TABLE copies RENAME TO c0; CREATE VIEW copies AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT * FROM c0, r;"
make check_expr "DROP TABLE allocation_categories; CREATE TABLE allocation_categories (allocation INTEGER PRIMARY KEY, category TEXT NOT NULL CHECK (length(randomblob(50000000)) > 0), reason TEXT, confidence REAL, rule TEXT);"
make default_expr "DROP TABLE allocation_subranges; CREATE TABLE allocation_subranges (id INTEGER PRIMARY KEY, allocation INTEGER NOT NULL, offset INTEGER NOT NULL, bytes INTEGER NOT NULL, begin_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, category TEXT NOT NULL, confidence REAL, rule TEXT, reason TEXT, pad BLOB DEFAULT (zeroblob(100000000)));"
make index_expr "CREATE INDEX slow ON allocation_categories (length(zeroblob(100000000)) + allocation);"
make index_partial "CREATE INDEX slow2 ON allocation_categories (allocation) WHERE length(zeroblob(100000000)) > 0;"
make generated "ALTER TABLE kernels ADD COLUMN g BLOB GENERATED ALWAYS AS (zeroblob(100000000)) VIRTUAL;"
make format999 "PRAGMA user_version = 999;"
make format0 "PRAGMA user_version = 0;"
make no_run_row "DELETE FROM run;"
head -c 40000 good.sqlite >truncated.sqlite
mkfifo fifo.sqlite

for name in trigger trigger_on_read view_blob view_recursive check_expr default_expr index_expr index_partial generated \
            format999 format0 no_run_row truncated fifo; do
    file="$name.sqlite"
    before=$( [ -f "$file" ] && sha256sum "$file" | cut -d' ' -f1)
    for cmd in tag report export; do
        out=()
        [ "$cmd" = export ] && out=(-o "$name.json")
        timeout 20 "$TBDPROF" "$cmd" "$file" "${out[@]}" >/dev/null 2>"$WORK/err"
        status=$?
        [ "$status" -eq 124 ] && fail "$cmd $file: still running after 20 s"
        [ "$status" -ne 0 ] || fail "$cmd $file: accepted (exit 0)"
        [ "$status" -lt 128 ] || fail "$cmd $file: died of a signal ($status)"
        [ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "$cmd $file: want one line on stderr: $(cat "$WORK/err")"
        [ -e "$name.json" ] && fail "export $file wrote $name.json"
    done
    after=$( [ -f "$file" ] && sha256sum "$file" | cut -d' ' -f1)
    [ "$before" = "$after" ] || fail "$file was changed"
    pass "$name refused by tag, report, export: $(head -c 150 "$WORK/err")"
done
[ "$(sqlite3 trigger.sqlite "SELECT count(*) FROM kernels")" -eq "$kernels" ] || fail "the trigger ran"

# Still accepted: a column added at the end of a table (a newer tbdprof of the same format version).
make newer_column "ALTER TABLE allocation_categories ADD COLUMN extra INTEGER NOT NULL DEFAULT 0;
                   CREATE TABLE newer_table (x INTEGER); CREATE VIEW newer_view AS SELECT count(*) FROM kernels;
                   CREATE INDEX newer_index ON allocation_categories (category, allocation);"
"$TBDPROF" tag newer_column.sqlite >/dev/null 2>"$WORK/err" || fail "tag refuses a trace with an added column: $(cat "$WORK/err")"
"$TBDPROF" report newer_column.sqlite >/dev/null 2>"$WORK/err" || fail "report refuses a trace with an added column: $(cat "$WORK/err")"
pass "what a newer tbdprof may add without a version bump (column, table, view, plain index) is accepted"
finish
