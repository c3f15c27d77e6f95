#!/usr/bin/env bash
# Records nvtx_program, which uses every NVTX call the collector records (nested push/pop, too deep a
# stack, Unicode and registered messages, a domain with its own stack, start/end across threads,
# marks, 4 threads, a second shared object) and writes the ranges it expects with the clock readings
# around each call; every expected range must be in the trace exactly once, inside its brackets, on
# the thread that began it, and nothing else.
source "$(dirname "$0")/common.sh"
: "${NVTX_PROGRAM:?}"
cd "$WORK" || exit 1
"$TBDPROF" --sim -o trace.sqlite -- "$NVTX_PROGRAM" expected.tsv >out 2>err
status=$?
[ "$status" -eq 0 ] || { cat err; fail "tbdprof/nvtx_program exited $status"; finish; }
[ -s expected.tsv ] || { fail "nvtx_program wrote no expectations"; finish; }

checks=$(script <<'SQL'
ATTACH 'trace.sqlite' AS t;
CREATE TABLE expected(name TEXT, domain TEXT, tid INTEGER, begin_lo INTEGER, begin_hi INTEGER,
                      end_lo INTEGER, end_hi INTEGER);
.mode tabs
.import expected.tsv expected
CREATE TABLE got AS
    SELECT r.id, r.name, coalesce(r.domain, '') AS domain, th.tid, r.begin_ns + run.start_monotonic_ns AS b,
           r.end_ns + run.start_monotonic_ns AS e
    FROM t.ranges r JOIN t.threads th ON th.id = r.thread, t.run;
CREATE INDEX got_name ON got(name);
SELECT 'missing', x.name, x.domain, x.tid FROM expected x
    WHERE (SELECT count(*) FROM got g WHERE g.name = x.name AND g.domain = x.domain AND g.tid = x.tid
           AND g.b BETWEEN x.begin_lo AND x.begin_hi AND g.e BETWEEN x.end_lo AND x.end_hi) != 1;
SELECT 'unexpected', g.name, g.domain, g.tid FROM got g WHERE NOT EXISTS (SELECT 1 FROM expected x WHERE x.name = g.name);
SELECT 'count', (SELECT count(*) FROM expected), (SELECT count(*) FROM got);
SELECT 'order', a.id FROM t.ranges a JOIN t.ranges b ON b.id = a.id + 1 WHERE b.begin_ns < a.begin_ns;
SELECT 'dropped', cause, count FROM t.dropped_events;
SQL
)
expect_none "every expected range recorded once, inside its brackets, on its thread" "$(grep -E '^(missing|unexpected|SQL-ERROR)' <<<"$checks")"
read -r _ want got <<<"$(grep '^count' <<<"$checks")"
[ "${want:-0}" -gt 2000 ] || fail "too few expectations ($want)"
expect_equal "ranges in the trace" "$got" "$want"
expect_none "ids in begin order" "$(grep '^order' <<<"$checks")"
expect_none "no dropped events" "$(grep '^dropped' <<<"$checks")"
expect_equal "deep ranges kept (the outer 32)" "$(query trace.sqlite "SELECT count(*) FROM ranges WHERE name LIKE 'deep#%'")" 32
expect_equal "a mark has begin = end" "$(query trace.sqlite "SELECT end_ns - begin_ns FROM ranges WHERE name = 'mark-here'")" 0
finish
