#!/usr/bin/env bash
# The profiled program's own files and output are byte-identical with
# and without tbdprof, its tail is recorded when it ends with _exit, and work whose CUPTI correlation
# record was dropped is stored once (misbehaving_program.cu; the simulated GPU's ground truth).
source "$(dirname "$0")/../cli/common.sh"
: "${MISBEHAVING_PROGRAM:?}" "${TRACE_VS_TRUTH:?}" "${LOST_PAIRING_CHECK:?}" "${SIMGPU_DIR:?}"
cd "$WORK" || exit 1
# pass only when nothing failed since the previous pass.
section_start=0
section_pass() {
    [ "$FAILURES" -eq "$section_start" ] && pass "$1"
    section_start=$FAILURES
}
prog=$MISBEHAVING_PROGRAM
mkdir tmp
export TMPDIR="$WORK/tmp"
kernels() { "$TRACE_VS_TRUTH" --count-kernels "$1"; }

# 4a. The program closes every descriptor >= 3 and opens a file of its own: it gets the lowest number,
# where the collector's raw file used to be (fd 3), and the collector wrote its records into it.
# Without tbdprof the program runs on the simulated GPU's libraries all the same.
plain() { LD_LIBRARY_PATH="$SIMGPU_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$prog" "$@"; }
plain close_all 300 plain.txt || fail "close_all without tbdprof failed"
"$TBDPROF" --sim -o close_all.sqlite -- "$prog" close_all 300 profiled.txt >/dev/null 2>err4a \
    || fail "close_all under tbdprof: exit $?; $(cat err4a)"
if cmp -s plain.txt profiled.txt; then
    pass "close_all: the program's file is byte-identical ($(wc -c <profiled.txt) B)"
else
    fail "close_all: the program's file differs under tbdprof ($(wc -c <profiled.txt) B, want $(wc -c <plain.txt))"
fi
[ "$(kernels close_all.sqlite)" = 600 ] || fail "close_all: $(kernels close_all.sqlite) kernels in the trace, want 600"
grep -q "closed or replaced tbdprof's raw file descriptor" err4a || fail "close_all: not said: $(cat err4a)"
section_pass "close_all: trace complete (600 kernels), the reopened descriptor said"

# 4a'. The program dup2s its own file onto every number (the collector's among them).
plain dup_over 300 plain3.txt || fail "dup_over without tbdprof failed"
"$TBDPROF" --sim -o dup_over.sqlite -- "$prog" dup_over 300 profiled3.txt >/dev/null 2>err4c \
    || fail "dup_over under tbdprof: exit $?; $(cat err4c)"
cmp -s plain3.txt profiled3.txt ||
    fail "dup_over: the program's file differs under tbdprof ($(wc -c <profiled3.txt) B, want $(wc -c <plain3.txt))"
[ "$(kernels dup_over.sqlite)" = 600 ] || fail "dup_over: $(kernels dup_over.sqlite) kernels in the trace, want 600"
section_pass "dup_over: the program's file byte-identical, 600 of 600 kernels"

# 4a''. The same, 40 rounds or more from a second thread while the first launches: a replacement
# between the writer's check of its number and its write would put records into the program's file.
plain dup_storm 20000 plain4.txt || fail "dup_storm without tbdprof failed"
"$TBDPROF" --sim -o dup_storm.sqlite -- "$prog" dup_storm 20000 profiled4.txt >/dev/null 2>err4d \
    || fail "dup_storm under tbdprof: exit $?; $(cat err4d)"
cmp -s plain4.txt profiled4.txt ||
    fail "dup_storm: the program's file differs under tbdprof ($(wc -c <profiled4.txt) B, want $(wc -c <plain4.txt))"
[ "$(kernels dup_storm.sqlite)" = 20000 ] ||
    fail "dup_storm: $(kernels dup_storm.sqlite) kernels in the trace, want 20000; $(cat err4d)"
section_pass "dup_storm: the program's file byte-identical, 20000 of 20000 kernels"

# 4b. stdout closed (>&-) for tbdprof and the program: the raw file must not become fd 1.
plain stdout 450 plain2.txt >&- 2>/dev/null || fail "stdout mode without tbdprof failed"
"$TBDPROF" --sim -o closed_stdout.sqlite -- "$prog" stdout 450 profiled2.txt >&- 2>err4b \
    || fail "stdout closed under tbdprof: exit $?; $(cat err4b)"
cmp -s plain2.txt profiled2.txt || fail "stdout closed: the program's file differs under tbdprof"
[ "$(kernels closed_stdout.sqlite)" = 450 ] ||
    fail "stdout closed: $(kernels closed_stdout.sqlite) kernels in the trace, want 450; $(cat err4b)"
section_pass "stdout closed: program's file identical, 450 of 450 kernels"

# 6. _exit: no exit handler runs; the collector's _exit hook writes the tail.
"$TBDPROF" --sim -o quick.sqlite -- "$prog" quick_exit 5000 >/dev/null 2>err6 || fail "quick_exit: exit $?; $(cat err6)"
[ "$(kernels quick.sqlite)" = 5000 ] || fail "quick_exit: $(kernels quick.sqlite) kernels of 5000; $(cat err6)"
grep -q "without tbdprof's last flush" err6 && fail "quick_exit: reported as lost: $(cat err6)"
section_pass "_exit after 5000 launches: 5000 kernels"
# exit_group itself: nothing can flush, and what is lost is not lost silently.
"$TBDPROF" --sim -o exit_group.sqlite -- "$prog" exit_group 5000 >/dev/null 2>err6b || fail "exit_group: exit $?"
grep -q "ended without tbdprof's last flush" err6b || fail "exit_group: the possible loss is not said: $(cat err6b)"
section_pass "exit_group: the possible loss said ($(kernels exit_group.sqlite) of 5000 kernels kept)"

# 7. Every 7th CUPTI correlation record dropped (test knob): each launch, copy and set stored once,
# with device times equal to the simulated GPU's ground truth, and the drop in the report's notes.
TBDSIM_TRUTH="$WORK/truth.tsv" TBDPROF_TEST_DROP_CORRELATION_EVERY=7 TBDPROF_TEST_DROPPED_CORRELATIONS="$WORK/dropped.txt" \
    "$TBDPROF" --sim -o drops.sqlite -- "$prog" launches 4000 >/dev/null 2>err7 || fail "drops: exit $?; $(cat err7)"
[ "$(kernels drops.sqlite)" = 4000 ] || fail "drops: $(kernels drops.sqlite) kernels for 4000 launches"
# The run line fails for the drops themselves; every row must match the truth, none host-timed.
"$TRACE_VS_TRUTH" drops.sqlite truth.tsv >vs7 2>&1
for what in "kernels      4000" "copies       1" "sets         1"; do
    grep -q "^ok    $what match the truth" vs7 || fail "drops: $what do not match the truth: $(head -20 vs7)"
done
grep -q " 0 host-timed kernels" vs7 || fail "drops: kernels left host-timed: $(head -3 vs7)"
# Each kernel whose correlation record was dropped sits with its own launch (the drops' log says
# whose it was): the thread's, in the thread's launch order.
"$LOST_PAIRING_CHECK" drops.sqlite dropped.txt >lp7 2>&1 || fail "drops: kernels with the wrong launch: $(cat lp7)"
grep -q "lost their correlation record" err7 || fail "drops: the pairing by order is not said: $(cat err7)"
"$TBDPROF" report drops.sqlite >report7 2>&1 || fail "report of drops.sqlite failed"
grep -q "events were dropped while recording" report7 || fail "drops: the report does not say it: $(cat report7)"
# ... and where in the timeline (the first and last drop's times, from RawDropped).
grep -Eq "dropped [0-9]+ events \(CUPTI buffers full\) between [0-9.]+ s and [0-9.]+ s" report7 ||
    fail "drops: the report does not say when: $(cat report7)"
section_pass "correlation records dropped: 4000 kernels for 4000 launches, trace = truth, drop in the report"
# The same with 8 threads launching at once: their CUPTI ids interleave, and a thread held between
# tbdprof's hook and the driver gets its id among another thread's. Exact: every kernel matches the
# truth, none is host-timed or without a launch, and every thread's kernels keep its launch order.
TBDSIM_TRUTH="$WORK/truth8.tsv" TBDPROF_TEST_DROP_CORRELATION_EVERY=7 TBDPROF_TEST_DROPPED_CORRELATIONS="$WORK/dropped8.txt" \
    "$TBDPROF" --sim -o drops8.sqlite -- "$prog" threads 1000 >/dev/null 2>err7b || fail "drops, 8 threads: exit $?"
"$TRACE_VS_TRUTH" drops8.sqlite truth8.tsv >vs7b 2>&1
grep -q "^ok    kernels      8000 match the truth" vs7b || fail "drops, 8 threads: kernels differ from the truth: $(head -20 vs7b)"
grep -q " 0 host-timed kernels" vs7b || fail "drops, 8 threads: kernels left host-timed: $(head -3 vs7b)"
"$LOST_PAIRING_CHECK" drops8.sqlite dropped8.txt >lp7b 2>&1
grep -q "^ok    thread order 8000 of 8000" lp7b || fail "drops, 8 threads: kernels out of their thread's order: $(cat lp7b)"
# Which of two threads inside their launch calls at once owns a lost kernel is not always decidable
# from what CUPTI and the hooks record (docs/reliability.md): said, not failed.
grep -q "^ok    lost kernels" lp7b || echo "note: drops, 8 threads: $(grep 'lost kernels' lp7b)"
section_pass "correlation records dropped, 8 threads: 8000 kernels = truth, each with a launch, in thread order"
[ -z "$(ls "$TMPDIR")" ] || fail "run directories left: $(ls "$TMPDIR")"
finish
