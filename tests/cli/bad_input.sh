#!/usr/bin/env bash
# Bad input: one clear line on stderr, the documented exit status, nothing left behind, and the
# command never runs when the output cannot be written.
source "$(dirname "$0")/common.sh"
cd "$WORK" || exit 1

expect_status 2 "no arguments" -- "$TBDPROF" && stderr_has "no command"
expect_status 2 "only --" -- "$TBDPROF" -- && stderr_has "no command"
expect_status 2 "record without a command" -- "$TBDPROF" record --sim
expect_status 2 "unknown option" -- "$TBDPROF" --bogus -- true && stderr_has "unknown option '--bogus'"
expect_status 2 "--stacks not a number" -- "$TBDPROF" --stacks abc -- true && stderr_has "bad --stacks value 'abc'"
expect_status 2 "--stacks too deep" -- "$TBDPROF" --stacks 100000 -- true
expect_status 2 "--stacks negative" -- "$TBDPROF" --stacks -1 -- true
expect_status 2 "--stacks without a value" -- "$TBDPROF" --stacks
expect_status 2 "--max-buffer-memory not a number" -- "$TBDPROF" --max-buffer-memory lots -- true &&
    stderr_has "bad --max-buffer-memory value 'lots'"
expect_status 2 "--max-buffer-memory too small" -- "$TBDPROF" --max-buffer-memory 4 -- true
expect_status 2 "-o without a value" -- "$TBDPROF" -o
expect_status 127 "command not found in PATH" -- "$TBDPROF" --sim -o t1.sqlite -- no-such-command-tbdprof \
    && stderr_has "not found"
expect_status 127 "command path does not exist" -- "$TBDPROF" --sim -o t2.sqlite -- ./nowhere/cmd
echo "echo hi" > not-executable && chmod 644 not-executable
expect_status 126 "command is not executable" -- "$TBDPROF" --sim -o t3.sqlite -- ./not-executable
[ -e t1.sqlite ] || [ -e t2.sqlite ] || [ -e t3.sqlite ] && fail "a trace was written for a command that never ran"

expect_status 1 "output directory missing" -- "$TBDPROF" --sim -o "$WORK/no/such/dir/t.sqlite" -- touch ran1 \
    && stderr_has "cannot write"
expect_status 1 "output under a file" -- "$TBDPROF" --sim -o /etc/hostname/t.sqlite -- touch ran2
mkdir -p adir
expect_status 1 "output is a directory" -- "$TBDPROF" --sim -o adir -- touch ran3 && stderr_has "is a directory"
echo "precious" > existing.sqlite
expect_status 2 "existing output without --force" -- "$TBDPROF" --sim -o existing.sqlite -- touch ran4 \
    && stderr_has "use --force"
[ "$(cat existing.sqlite)" = "precious" ] || fail "existing output was modified"
for marker in ran1 ran2 ran3 ran4; do
    [ -e "$marker" ] && fail "the command ran although the output was unusable ($marker)"
done
ls ./*.tmp adir/*.tmp 2>/dev/null && fail "temporary files left behind"

if preload_built; then
    "$TBDPROF" --sim --force -o existing.sqlite -- true 2>"$WORK/err" || fail "--force: $(cat "$WORK/err")"
    [ "$(head -c 15 existing.sqlite)" = "SQLite format 3" ] || fail "--force did not write a trace"
    "$TBDPROF" --sim -o st.sqlite -- sh -c 'exit 3' 2>"$WORK/err"
    status=$?
    [ "$status" -eq 3 ] || fail "exit status 3 of the command came back as $status"
    [ -e st.sqlite ] || fail "no trace for a command that failed"
    pass "--force replaces; the command's exit status is passed on"
fi
finish
