#!/usr/bin/env bash
# A progress line on stderr for long work, only when stderr is a terminal (a pty from
# `script` here), never with --quiet or off a terminal. The build is made long with the tests'
# TBDPROF_TEST_BUILD_PAUSE_MS.
source "$(dirname "$0")/common.sh"
preload_built || { echo "skipped: the collector is not built"; exit 77; }
command -v script >/dev/null || { echo "skipped: no script(1) for a pseudo-terminal"; exit 77; }
cd "$WORK" || exit 1
TBDPROF_TEST_BUILD_PAUSE_MS=900 script -qec "'$TBDPROF' --sim -o a.sqlite -- true" /dev/null >tty.txt 2>&1
grep -q "tbdprof: building the trace: .*%" tty.txt && pass "progress line while the trace builds, on a terminal" \
    || fail "no progress line on a terminal: $(tr '\r' '\n' <tty.txt | head -5)"
grep -q $'\r\033\[K' tty.txt && pass "the line erases itself" || fail "the progress line is not erased"
TBDPROF_TEST_BUILD_PAUSE_MS=900 script -qec "'$TBDPROF' --sim -q -o b.sqlite -- true" /dev/null >tty-quiet.txt 2>&1
grep -q "building the trace" tty-quiet.txt && fail "--quiet still shows progress" || pass "--quiet: no progress"
TBDPROF_TEST_BUILD_PAUSE_MS=900 "$TBDPROF" --sim -o c.sqlite -- true 2>err.txt
grep -q "building the trace" err.txt && fail "progress on stderr that is not a terminal" || pass "off a terminal: no progress"
finish
