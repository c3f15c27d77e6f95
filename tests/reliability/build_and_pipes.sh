#!/usr/bin/env bash
# 5 and 11: `tbdprof build` touches only the run directory of a finished
# recording; tbdprof survives a closed pipe on its stderr; out of memory, a build fails cleanly.
source "$(dirname "$0")/../cli/common.sh"
: "${MISBEHAVING_PROGRAM:?}" "${TRACE_VS_TRUTH:?}"
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
run_dir() { ls -d "$TMPDIR"/tbdprof-run-* 2>/dev/null | head -1; }
# The run directory of the recording to OUTPUT (others may be left by a failed step).
run_dir_of() { dirname "$(grep -l -x "output=\(.*/\)\?$1" "$TMPDIR"/tbdprof-run-*/tbdprof-run.info | head -1)"; }

# 1. Not a run directory: refused with one line, nothing built, nothing removed.
mkdir precious && echo keep >precious/file
expect_status 1 "build of a directory that is no run directory" -- "$TBDPROF" build precious -o x.sqlite &&
    stderr_has "not the run directory of a tbdprof recording"
[ -f precious/file ] || fail "tbdprof build removed a directory it did not make"
[ -e x.sqlite ] && fail "tbdprof build wrote a trace from a directory that is no run directory"
(cd precious && expect_status 1 "build . -o ../y.sqlite" -- "$TBDPROF" build . -o ../y.sqlite)
[ -f precious/file ] || fail "tbdprof build . emptied the current directory"

# A finished recording kept on purpose: never built into itself; built elsewhere, then removed.
TBDPROF_KEEP_RUN_DIR=1 "$TBDPROF" --sim -q -o kept.sqlite -- "$prog" launches 50 >/dev/null 2>&1 || fail "recording failed"
dir=$(run_dir_of kept.sqlite)
[ -n "$dir" ] || fail "no run directory kept"
expect_status 2 "build -o RUN_DIR/out.sqlite" -- "$TBDPROF" build "$dir" -o "$dir/out.sqlite" &&
    stderr_has "inside the run directory"
[ -f "$dir/tbdprof-run.info" ] || fail "the refused build touched the run directory"
echo mine >"$dir/notes-of-the-user"
"$TBDPROF" build -q "$dir" -o built.sqlite >/dev/null 2>err1 || fail "build of a kept run directory failed: $(cat err1)"
[ "$("$TRACE_VS_TRUTH" --count-kernels built.sqlite)" = 50 ] || fail "the build lost kernels"
[ -f "$dir/notes-of-the-user" ] || fail "tbdprof build removed a file it did not write"
grep -q "was kept: it holds files that tbdprof did not write" err1 || fail "keeping the directory not said: $(cat err1)"
ls "$dir" | grep -q raw- && fail "the raw files were not removed after the build"
rm -rf "$dir"
section_pass "build: only a finished run directory, never into itself, only its own files removed"

# 2. A recording still running: refused, and the recording finishes its own trace.
"$TBDPROF" --sim -q -o live.sqlite -- sh -c 'sleep 2' >/dev/null 2>&1 &
live=$!
waited=0
until [ -n "$(run_dir)" ] && [ -f "$(run_dir)/tbdprof-run.info" ] || [ $waited -ge 100 ]; do sleep 0.05; waited=$((waited + 1)); done
dir=$(run_dir)
expect_status 1 "build of a recording still running" -- "$TBDPROF" build "$dir" -o early.sqlite &&
    stderr_has "is still being recorded into by tbdprof (pid $live)"
[ -e early.sqlite ] && fail "a live recording was built"
wait "$live" || fail "the live recording failed after the refused build"
[ -s live.sqlite ] || fail "the live recording wrote no trace"
[ -z "$(ls "$TMPDIR")" ] || fail "the live recording left its run directory"
# A process that still writes its raw file (it holds the collector's lock): refused as well.
TBDPROF_KEEP_RUN_DIR=1 "$TBDPROF" --sim -q -o kept2.sqlite -- "$prog" launches 10 >/dev/null 2>&1
dir=$(run_dir_of kept2.sqlite)
raw=$(ls "$dir"/raw-*.tbdraw | head -1)
flock -s "$raw" sleep 3 &
holder=$!
sleep 0.3
expect_status 1 "build while a raw file is written" -- "$TBDPROF" build "$dir" -o early2.sqlite &&
    stderr_has "a process that is still running"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
rm -rf "$dir"
section_pass "build refuses a recording in progress"

# 5. stderr a pipe whose reader has gone: tbdprof's notes must not kill it (SIGPIPE).
"$TBDPROF" --sim -o piped.sqlite -- "$prog" launches 20 2>&1 | true
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] || fail "tbdprof with a closed pipe on stderr: exit $status, want the program's 0"
[ -s piped.sqlite ] || fail "tbdprof with a closed pipe on stderr wrote no trace"
"$TBDPROF" --sim -o piped2.sqlite -- "$prog" launches 20 2>&1 | head -1 >/dev/null
status=${PIPESTATUS[0]}
[ "$status" -eq 0 ] || fail "tbdprof ... 2>&1 | head -1: exit $status"
[ -s piped2.sqlite ] || fail "tbdprof ... | head -1 wrote no trace"
# The program keeps the SIGPIPE disposition it would have had: it still dies of it.
sh -c 'sleep 0.3; echo one; echo two' | true
plain=${PIPESTATUS[0]}
"$TBDPROF" --sim -q -o piped3.sqlite -- sh -c 'sleep 0.3; echo one; echo two' 2>/dev/null | true
profiled=${PIPESTATUS[0]}
[ "$plain" -eq "$profiled" ] || fail "the program's SIGPIPE: exit $profiled under tbdprof, $plain without"
[ -z "$(ls "$TMPDIR")" ] || fail "run directories left after closed pipes: $(ls "$TMPDIR")"
section_pass "closed pipe on stderr: tbdprof exits with the program's status and writes the trace"

# 11. Out of memory while building: one message with the build command; no temporary, no lock.
TBDPROF_KEEP_RUN_DIR=1 "$TBDPROF" --sim -q -o big.sqlite -- "$prog" launches 200000 >/dev/null 2>&1 || fail "big recording failed"
rm -f big.sqlite
dir=$(run_dir_of big.sqlite)
# The build of 200 000 kernels maps its raw file (36 MB) and needs about 95 MB of address space in
# all (2026-12-03; 150 MB before launches were read back from the file): 64 MB maps the file (below
# about 45 MB the mapping itself fails and the file is skipped) but leaves too little for the rest.
(ulimit -v 64000 && exec "$TBDPROF" build -q "$dir" -o oom.sqlite) >/dev/null 2>err11
status=$?
[ "$status" -eq 1 ] || fail "out of memory: exit $status, want 1; $(cat err11)"
grep -q "out of memory" err11 || fail "out of memory not said: $(cat err11)"
grep -q "build them with: tbdprof build $dir -o oom.sqlite" err11 || fail "no build command given: $(cat err11)"
[ -z "$(find . -maxdepth 1 -name '.oom.sqlite*')" ] || fail "out of memory left: $(ls -a | grep oom)"
[ -e oom.sqlite ] && fail "out of memory left a trace"
ls "$dir"/raw-*.tbdraw >/dev/null 2>&1 || fail "out of memory: the raw files are gone"
"$TBDPROF" build -q "$dir" -o oom.sqlite >/dev/null 2>&1 || fail "the build after more memory failed"
section_pass "out of memory while building: clean failure, the hint, then built"
finish
