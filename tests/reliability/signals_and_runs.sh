#!/usr/bin/env bash
# Signals while tbdprof builds the trace, tbdprof killed while the program runs, run
# directories left behind and `tbdprof build`, and the simulated GPU's settings checked up front.
source "$(dirname "$0")/../cli/common.sh"
: "${TBDPROF_BIN_DIR:?}"
cd "$WORK" || exit 1
mlp="$TBDPROF_BIN_DIR/mlp_train"
mkdir tmp
export TMPDIR="$WORK/tmp"
# Waits (at most 20 s) until the recorded program has ended and tbdprof is building.
wait_for_build() {
    local waited=0
    until grep -qs '^exit_status=' "$TMPDIR"/tbdprof-run-*/tbdprof-run.info; do
        sleep 0.05
        waited=$((waited + 1))
        [ $waited -lt 400 ] || { fail "the build never started"; return 1; }
    done
}
wait_bounded() {
    local pid=$1 waited=0
    while kill -0 "$pid" 2>/dev/null && [ $waited -lt 200 ]; do sleep 0.1; waited=$((waited + 1)); done
    kill -0 "$pid" 2>/dev/null && { fail "process $pid still running"; kill -KILL "$pid"; }
    wait "$pid"
    status=$?
}

# 1. One SIGINT during the build: said, and the build goes on to a complete trace.
TBDPROF_TEST_BUILD_PAUSE_MS=2000 env --default-signal=INT "$TBDPROF" --sim -o one.sqlite -- "$mlp" --iterations 2 \
    >/dev/null 2>err1 &
pid=$!
wait_for_build && kill -INT "$pid"
wait_bounded "$pid"
[ "$status" -eq 0 ] || fail "one SIGINT while building: exit $status; $(cat err1)"
grep -q "still building the trace" err1 || fail "the first signal was not acknowledged: $(cat err1)"
[ -s one.sqlite ] || fail "one SIGINT while building lost the trace"
[ -z "$(ls "$TMPDIR")" ] || fail "run directory left after a completed build: $(ls "$TMPDIR")"
pass "first signal while building: acknowledged, trace complete"

# 2. Two signals: stopped at once, nothing written, raw files kept, the command to build them given.
TBDPROF_TEST_BUILD_PAUSE_MS=5000 "$TBDPROF" --sim -o two.sqlite -- "$mlp" --iterations 2 >/dev/null 2>err2 &
pid=$!
wait_for_build && kill -TERM "$pid" && sleep 0.2 && kill -TERM "$pid"
wait_bounded "$pid"
[ "$status" -eq 143 ] || fail "two SIGTERMs while building: exit $status, want 143; $(cat err2)"
[ -e two.sqlite ] && fail "a stopped build left two.sqlite"
[ "$(find . -maxdepth 1 -name '.two*tmp*' | wc -l)" -eq 0 ] || fail "a stopped build left its temporary: $(ls -a)"
build_cmd=$(sed -n 's/^tbdprof: build the trace later with: tbdprof //p' err2)
[ -n "$build_cmd" ] || fail "no build command printed: $(cat err2)"
# shellcheck disable=SC2086
"$TBDPROF" $build_cmd >/dev/null 2>err2b || fail "tbdprof $build_cmd failed: $(cat err2b)"
[ "$("$TRACE_VS_TRUTH" --count-kernels two.sqlite)" -gt 0 ] || fail "the later build has no kernels"
[ -z "$(ls "$TMPDIR")" ] || fail "tbdprof build left the run directory"
pass "second signal: stopped, raw files kept, 'tbdprof $build_cmd' built them"

# 3. tbdprof killed: the program ends with it (PR_SET_PDEATHSIG), and the next run says what is left.
"$TBDPROF" --sim -o killed.sqlite -- "$mlp" --iterations 1000000 >/dev/null 2>/dev/null &
pid=$!
sleep 1.5
child=$(pgrep -P "$pid" | head -1)
[ -n "$child" ] || fail "no recorded program under tbdprof"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
waited=0
while [ -n "$child" ] && kill -0 "$child" 2>/dev/null && [ $waited -lt 100 ]; do sleep 0.1; waited=$((waited + 1)); done
if [ -n "$child" ] && kill -0 "$child" 2>/dev/null; then
    fail "the program runs on after tbdprof was killed"
    kill -KILL "$child"
fi
[ "$(find . -maxdepth 1 -name '.killed.sqlite.tmp-*' | wc -l)" -eq 0 ] || fail "the killed recording left a temporary: $(ls -a)"
"$TBDPROF" --sim -o next.sqlite -- true >/dev/null 2>err3 || fail "the next recording failed: $(cat err3)"
grep -q "was not built: its raw files are in" err3 || fail "the next run did not tell of the run left behind: $(cat err3)"
leftover_cmd=$(sed -n 's/^tbdprof: note: build it with: tbdprof \(.*\) (or remove the directory)$/\1/p' err3 | head -1)
# shellcheck disable=SC2086
"$TBDPROF" $leftover_cmd >/dev/null 2>err3b || fail "tbdprof $leftover_cmd failed: $(cat err3b)"
[ -s killed.sqlite ] || fail "the left-behind run did not build"
pass "killed tbdprof: program ended, next run told of it, built later ($("$TRACE_VS_TRUTH" --count-kernels killed.sqlite) kernels)"

# A run directory kept on purpose (TBDPROF_KEEP_RUN_DIR=1) is not reported as left behind.
TBDPROF_KEEP_RUN_DIR=1 "$TBDPROF" --sim -o kept.sqlite -- true >/dev/null 2>&1 || fail "recording with a kept run directory failed"
"$TBDPROF" --sim -o after-kept.sqlite -- true >/dev/null 2>err3c || fail "the run after it failed"
grep -q "was not built" err3c && fail "a run directory kept on purpose is reported as left behind: $(cat err3c)"
rm -rf "$TMPDIR"/tbdprof-run-*
pass "a run directory kept with TBDPROF_KEEP_RUN_DIR=1 is not reported"

# 4. The simulated GPU's model and memory size are checked before anything runs.
"$TBDPROF" --sim=h100 -o h100.sqlite -- "$mlp" --iterations 1 >/dev/null 2>err4 || fail "--sim=h100 refused: $(cat err4)"
grep -q "h100" <("$TBDPROF" --help) || fail "--help does not list h100"
expect_status 2 "--sim=nope" -- "$TBDPROF" --sim=nope -o nope.sqlite -- touch ran && stderr_has "known: h100-sxm"
[ -e ran ] && fail "the program ran with an unknown model"
TBDSIM_MODEL=nope expect_status 2 "TBDSIM_MODEL=nope" -- "$TBDPROF" --sim -o nope.sqlite -- touch ran
[ -e ran ] && fail "the program ran with an unknown TBDSIM_MODEL"
TBDSIM_MEMORY_BYTES=abc "$TBDPROF" --sim -o mem.sqlite -- "$mlp" --iterations 1 >/dev/null 2>err5 \
    || fail "TBDSIM_MEMORY_BYTES=abc: the run failed: $(cat err5)"
grep -q "ignoring TBDSIM_MEMORY_BYTES='abc'" err5 || fail "TBDSIM_MEMORY_BYTES=abc not reported: $(cat err5)"
pass "--sim=h100 accepted, unknown models refused up front, TBDSIM_MEMORY_BYTES=abc reported"
finish
