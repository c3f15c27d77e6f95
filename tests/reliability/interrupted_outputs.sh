#!/usr/bin/env bash
# Outputs interrupted by signals leave nothing behind and say so (export, import, a build
# stopped twice: temporary and lock), the "build it later" hint is shell-quoted, a recording no
# process loaded the collector into says so and why, and an export into a closed stdout fails.
source "$(dirname "$0")/../cli/common.sh"
: "${TBDPROF_BIN_DIR:?}" "${TRACE_GENERATOR:?}"
cd "$WORK" || exit 1
mlp="$TBDPROF_BIN_DIR/mlp_train"
mkdir tmp
export TMPDIR="$WORK/tmp"
# wait_for FILE_GLOB: until a file matching it exists (at most 20 s).
wait_for() {
    local waited=0
    until compgen -G "$1" >/dev/null; do
        sleep 0.02
        waited=$((waited + 1))
        [ $waited -lt 1000 ] || { fail "$1 never appeared"; return 1; }
    done
}
no_leftovers() {  # no_leftovers NAME WHAT
    local left
    left=$(find . -maxdepth 1 -name ".$1.*" | tr '\n' ' ')
    [ -z "$left" ] || fail "$2 left $left"
}

# 19. SIGINT during export, SIGTERM during import: temporary and lock removed, the reason said,
# death by the signal (130, 143).
"$TRACE_GENERATOR" big.sqlite --kernels 400000 >/dev/null 2>&1 || fail "cannot generate a trace"
env --default-signal=INT "$TBDPROF" export big.sqlite -o big.json >/dev/null 2>err &
pid=$!
wait_for ".big.json.tmp-*" && kill -INT "$pid"
wait "$pid"
status=$?
[ "$status" -eq 130 ] || fail "export stopped by SIGINT: exit $status, want 130; $(cat err)"
grep -q "stopped by a signal: big.json was not written" err || fail "export stopped without a word: $(cat err)"
[ -e big.json ] && fail "the stopped export left big.json"
no_leftovers big.json "the stopped export"
pass "SIGINT during export: no temporary, no lock, said ($(head -1 err))"

awk 'BEGIN { printf "{\"traceEvents\": [";
             for (i = 0; i < 150000; i++) printf "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k%d\", \"pid\": 0, \"tid\": 7, \"ts\": %d, \"dur\": 5, \"args\": {\"device\": 0, \"stream\": 7}}", (i ? "," : ""), i % 5000, 10 * i;
             printf "]}\n" }' >many.json
"$TBDPROF" import many.json -o many.sqlite >/dev/null 2>err &
pid=$!
wait_for ".many.sqlite.tmp-*" && kill -TERM "$pid"
wait "$pid"
status=$?
[ "$status" -eq 143 ] || fail "import stopped by SIGTERM: exit $status, want 143; $(cat err)"
grep -q "stopped by a signal: many.sqlite was not written" err || fail "import stopped without a word: $(cat err)"
[ -e many.sqlite ] && fail "the stopped import left many.sqlite"
no_leftovers many.sqlite "the stopped import"
pass "SIGTERM during import: no temporary, no lock, said"

# 19 and 20. Two signals during the build: the lock goes too, and the printed command, pasted into a
# shell, builds the trace under its odd name and runs nothing else.
odd='my run; touch pwned.sqlite'
TBDPROF_TEST_BUILD_PAUSE_MS=5000 "$TBDPROF" --sim -o "$odd" -- "$mlp" --iterations 2 >/dev/null 2>err &
pid=$!
wait_for "$TMPDIR/tbdprof-run-*/raw-*" && wait_for ".my run; touch pwned.sqlite.tmp-*" && kill -TERM "$pid" && sleep 0.3 && kill -TERM "$pid"
wait "$pid"
status=$?
[ "$status" -eq 143 ] || fail "two SIGTERMs while building: exit $status; $(cat err)"
no_leftovers "$odd" "the stopped build"
cmd=$(sed -n 's/^tbdprof: build the trace later with: //p' err)
[ -n "$cmd" ] || fail "no build command printed: $(cat err)"
PATH="$(dirname "$TBDPROF"):$PATH" bash -c "$cmd" >/dev/null 2>err2 || fail "the printed command failed: $cmd: $(cat err2)"
[ -e pwned.sqlite ] && fail "pasting the printed command ran the second command: $cmd"
[ -s "$odd" ] || fail "the printed command did not build '$odd': $cmd"
pass "a build stopped twice leaves no lock; the hint is quoted: $cmd"

# 13. No process loaded the collector: said, with the reason tbdprof can see.
"$TBDPROF" --sim -o envi.sqlite -- env -i "$mlp" --iterations 1 >/dev/null 2>err
grep -q "loaded tbdprof's collector or called CUDA, so nothing was recorded" err || fail "env -i: no warning: $(cat err)"
grep -q "env\` cleared the environment" err || fail "env -i: the reason is not named: $(cat err)"
grep -q "tbdprof: recorded" err && fail "env -i: still says recorded: $(cat err)"
"$TBDPROF" --sim -o true.sqlite -- true >/dev/null 2>err || fail "recording true failed: $(cat err)"
grep -q "likely causes: the command clears its environment" err || fail "true: no likely causes: $(cat err)"
grep -q "nothing recorded from true" err || fail "true: the summary does not say nothing was recorded: $(cat err)"
# A setuid program of another user: the loader runs it in secure mode, without LD_PRELOAD (needs root
# to give the copy to nobody; skipped otherwise, or on a nosuid file system).
cp "$(command -v true)" suid_true
if chown nobody suid_true 2>/dev/null && chmod u+s suid_true && [ "$(id -u)" -eq 0 ]; then
    "$TBDPROF" --sim -o suid.sqlite -- ./suid_true >/dev/null 2>err
    grep -q "suid_true is setuid/setgid, and the dynamic loader ignores LD_PRELOAD" err ||
        grep -q "likely causes" err || fail "setuid: no warning: $(cat err)"
else
    echo "skip: the setuid case needs root"
fi
pass "a recording without the collector says so, with the reason"

# 21. Export into a closed stdout fails.
"$TRACE_GENERATOR" small.sqlite --kernels 2000 >/dev/null 2>&1 || fail "cannot generate a small trace"
"$TBDPROF" export small.sqlite -o /dev/stdout >&- 2>err
status=$?
[ "$status" -ne 0 ] || fail "export into a closed stdout exited 0"
[ -s err ] || fail "export into a closed stdout said nothing"
"$TBDPROF" export small.sqlite -o /dev/full --quiet 2>err
[ $? -ne 0 ] && grep -q "disk full\|No space" err || fail "export into /dev/full: $(cat err)"
pass "export into a closed stdout or /dev/full fails (exit $status: $(head -1 err))"
finish
