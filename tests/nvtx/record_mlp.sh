#!/usr/bin/env bash
# Records `mlp_train --iterations N --nvtx [ARGS...]` with tbdprof on the simulated GPU and checks the
# ranges against the program's structure and the simulated GPU's ground truth, then the iterations
# the tagger finds from them:
#   record_mlp.sh N [ARGS...]
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}"
iterations=$1
shift
cd "$WORK" || exit 1
TBDSIM_TRUTH="$WORK/truth.tsv" "$TBDPROF" --sim -o trace.sqlite -- "$TBDPROF_BIN_DIR/mlp_train" \
    --iterations "$iterations" --nvtx "$@" >out 2>err
status=$?
[ "$status" -eq 0 ] || { cat err; fail "tbdprof exited $status"; finish; }
grep -q "no training iterations" err && fail "tbdprof found no iterations: $(cat err)"

# Ranges: one "step" per iteration; forward, backward, optimizer inside a step, on its thread,
# one after the other (siblings never overlap); the same phases in every step.
expect_equal "step ranges" "$(query trace.sqlite "SELECT count(*) FROM ranges WHERE name = 'step'")" "$iterations"
expect_none "every range ends after it begins" \
    "$(query trace.sqlite "SELECT id, name FROM ranges WHERE end_ns IS NULL OR end_ns <= begin_ns")"
expect_none "only step, forward, backward, optimizer in the default domain" \
    "$(query trace.sqlite "SELECT id, name, domain FROM ranges WHERE name NOT IN ('step', 'forward', 'backward', 'optimizer') OR domain IS NOT NULL")"
phase_of="(SELECT s.id FROM ranges s WHERE s.name = 'step' AND s.thread = p.thread AND p.begin_ns >= s.begin_ns AND p.end_ns <= s.end_ns)"
expect_none "every phase inside exactly one step" \
    "$(query trace.sqlite "SELECT p.id, p.name FROM ranges p WHERE p.name != 'step' AND (SELECT count(*) FROM ranges s WHERE s.name = 'step' AND s.thread = p.thread AND p.begin_ns >= s.begin_ns AND p.end_ns <= s.end_ns) != 1")"
expect_none "phases of a step do not overlap" \
    "$(query trace.sqlite "SELECT a.id, b.id FROM ranges a JOIN ranges b ON b.id > a.id AND a.name != 'step' AND b.name != 'step' AND a.thread = b.thread AND b.begin_ns < a.end_ns")"
expect_none "each step: forward, backward, one optimizer after all backward" \
    "$(query trace.sqlite "SELECT s.id FROM ranges s WHERE s.name = 'step' AND (
        (SELECT count(*) FROM ranges p WHERE p.name = 'optimizer' AND $phase_of = s.id) != 1 OR
        (SELECT count(*) FROM ranges p WHERE p.name = 'forward' AND $phase_of = s.id) = 0 OR
        (SELECT count(*) FROM ranges p WHERE p.name = 'forward' AND $phase_of = s.id) !=
        (SELECT count(*) FROM ranges p WHERE p.name = 'backward' AND $phase_of = s.id) OR
        (SELECT max(p.end_ns) FROM ranges p WHERE p.name = 'backward' AND $phase_of = s.id) >
        (SELECT min(p.begin_ns) FROM ranges p WHERE p.name = 'optimizer' AND $phase_of = s.id))")"
expect_equal "same phases in every step" "$(query trace.sqlite "SELECT count(DISTINCT n) FROM (SELECT s.id, count(*) AS n FROM ranges s JOIN ranges p ON p.name != 'step' AND p.thread = s.thread AND p.begin_ns >= s.begin_ns AND p.end_ns <= s.end_ns WHERE s.name = 'step' GROUP BY s.id)")" 1

# Ground truth: the step ends after the loss is read back (a stream sync), so every kernel the
# simulated GPU ran from the first step on starts and ends inside one step, the same number per step.
awk -F'\t' '$1 == "kernel" { print $5 "\t" $6 }' truth.tsv >truth_kernels.tsv
truth=$(script <<'SQL'
ATTACH 'trace.sqlite' AS t;
CREATE TABLE k(s INTEGER, e INTEGER);
.mode tabs
.import truth_kernels.tsv k
CREATE TABLE steps AS SELECT r.id, r.begin_ns + run.start_monotonic_ns AS b, r.end_ns + run.start_monotonic_ns AS e
    FROM t.ranges r, t.run WHERE r.name = 'step';
SELECT 'outside', k.s, k.e FROM k WHERE k.s >= (SELECT min(b) FROM steps)
    AND (SELECT count(*) FROM steps s WHERE k.s >= s.b AND k.e <= s.e) != 1;
SELECT 'per_step', count(DISTINCT n), min(n) FROM (SELECT (SELECT count(*) FROM k WHERE k.s >= s.b AND k.e <= s.e) AS n FROM steps s);
SQL
)
expect_none "truth kernels from the first step on lie inside one step" "$(grep -E '^(outside|SQL-ERROR)' <<<"$truth")"
read -r _ distinct per_step <<<"$(grep '^per_step' <<<"$truth")"
expect_equal "truth kernels per step alike (per step: ${per_step:-?})" "$distinct" 1
[ "${per_step:-0}" -gt 0 ] || fail "no truth kernels inside steps"

# Iterations: recorded with the default range names, then re-tagged with --iteration-range.
expect_equal "iterations after recording" \
    "$(query trace.sqlite "SELECT count(*) || ' ' || group_concat(DISTINCT source) FROM iterations")" "$iterations nvtx"
expect_none "iteration k begins with step k" \
    "$(query trace.sqlite "WITH s AS (SELECT begin_ns, row_number() OVER (ORDER BY begin_ns) AS k FROM ranges WHERE name = 'step'),
                                 i AS (SELECT begin_ns, row_number() OVER (ORDER BY idx) AS k FROM iterations)
                            SELECT i.k FROM i LEFT JOIN s USING (k) WHERE s.begin_ns IS NULL OR s.begin_ns != i.begin_ns")"
"$TBDPROF" tag trace.sqlite >tag.out 2>&1 || fail "tbdprof tag failed: $(cat tag.out)"
grep -q "; $iterations iterations (from nvtx)" tag.out || fail "tbdprof tag: $(head -1 tag.out)"
forwards=$(query trace.sqlite "SELECT count(*) FROM ranges WHERE name = 'forward'")
"$TBDPROF" tag trace.sqlite --iteration-range forward >tag.out 2>&1 || fail "tbdprof tag --iteration-range failed"
grep -q "; $forwards iterations (from nvtx)" tag.out || fail "--iteration-range forward: $(head -1 tag.out)"
expect_none "--iteration-range forward: iterations begin with forward ranges" \
    "$(query trace.sqlite "SELECT i.id FROM iterations i WHERE i.source != 'nvtx' OR NOT EXISTS (SELECT 1 FROM ranges r WHERE r.name = 'forward' AND r.begin_ns = i.begin_ns)")"
"$TBDPROF" tag trace.sqlite --iteration-range no-such-range >tag.out 2>&1 || fail "tbdprof tag (no such range) failed"
grep -q "(from nvtx)" tag.out && fail "--iteration-range no-such-range still used NVTX: $(head -1 tag.out)"
expect_none "no such range: iterations not from nvtx" \
    "$(query trace.sqlite "SELECT DISTINCT source FROM iterations WHERE source = 'nvtx'")"
finish
