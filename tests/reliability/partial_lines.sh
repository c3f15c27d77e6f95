#!/usr/bin/env bash
# Tbdprof's messages and summary never share a line with the program's output. The program
# (partial_line_program.cpp) leaves its output mid-line while the collector has something to say; its
# stdout and stderr and tbdprof's stderr go to one file (and, once, to one pipe).
source "$(dirname "$0")/../cli/common.sh"
: "${PARTIAL_LINE_PROGRAM:?}"
cd "$WORK" || exit 1
# The no-messages and broken-pipe runs leave their run directory (the program made messages.txt a
# folder there, which tbdprof does not remove): inside $WORK, not in /tmp where later runs report it.
export TMPDIR="$WORK"
held="another tool holds CUPTI (CUPTI for an unnamed subscriber); recording with host-side timing"

# No line holds both the program's text and one of tbdprof's; tbdprof's lines begin with "tbdprof:".
separate_lines() {
    local file=$1 what=$2
    if grep -q 'prog:.*tbdprof:\|tbdprof:.*prog:' "$file"; then
        fail "$what: a tbdprof line shares a line with the program's: $(cat -A "$file")"
        return 1
    fi
    if grep 'tbdprof:' "$file" | grep -qv '^tbdprof:'; then
        fail "$what: a tbdprof line does not start its line: $(cat -A "$file")"
        return 1
    fi
}
# line_is FILE N TEXT WHAT: line N is TEXT exactly; line_like: TEXT is a glob pattern.
line_is() {
    local got
    got=$(sed -n "${2}p" "$1")
    [ "$got" = "$3" ] || { fail "$4: line $2 is '$got', want '$3': $(cat -A "$1")"; return 1; }
}
line_like() {
    local got
    got=$(sed -n "${2}p" "$1")
    # shellcheck disable=SC2053
    [[ "$got" == $3 ]] || { fail "$4: line $2 is '$got', want '$3': $(cat -A "$1")"; return 1; }
}

# A message for the end of the run: printed once, after the program, on a line of its own.
"$TBDPROF" --sim -o held.sqlite -- "$PARTIAL_LINE_PROGRAM" held >held.txt 2>&1
status=$?
[ "$status" -eq 0 ] || fail "held: exit $status: $(cat held.txt)"
separate_lines held.txt held && line_is held.txt 1 "[prog:A][prog:B][prog:C]" held &&
    line_is held.txt 2 "tbdprof: $held" held && [ "$(grep -c "$held" held.txt)" -eq 1 ] &&
    pass "held: the program's line intact, the collector's message once, after it"
"$TBDPROF" --sim -o held-pipe.sqlite -- "$PARTIAL_LINE_PROGRAM" held 2>&1 | cat >held-pipe.txt
separate_lines held-pipe.txt "held, through a pipe" && line_is held-pipe.txt 1 "[prog:A][prog:B][prog:C]" pipe &&
    line_is held-pipe.txt 2 "tbdprof: $held" pipe && pass "held, through a pipe: the same"

# The documented rule for a program whose output ends its line: into a file, no empty line (tbdprof
# reads the file's last byte); into a pipe, which cannot be read back, one empty line first.
"$TBDPROF" --sim -o line.sqlite -- "$PARTIAL_LINE_PROGRAM" line >line.txt 2>&1
line_is line.txt 4 "tbdprof: $held" "line, into a file" && pass "whole lines into a file: tbdprof's follow at once"
"$TBDPROF" --sim -o line-pipe.sqlite -- "$PARTIAL_LINE_PROGRAM" line 2>&1 | cat >line-pipe.txt
line_is line-pipe.txt 4 "" "line, through a pipe" && line_is line-pipe.txt 5 "tbdprof: $held" "line, through a pipe" &&
    pass "whole lines through a pipe: one empty line, then tbdprof's"

# The messages file cannot be written: the message goes out at once, on a line of its own; the
# program and the recording go on.
"$TBDPROF" --sim -o no-messages.sqlite -- "$PARTIAL_LINE_PROGRAM" no-messages >no-messages.txt 2>&1
status=$?
[ "$status" -eq 0 ] || fail "no-messages: exit $status: $(cat no-messages.txt)"
separate_lines no-messages.txt no-messages && line_is no-messages.txt 1 "[prog:A][prog:B]" no-messages &&
    line_is no-messages.txt 2 "tbdprof: $held" no-messages && line_is no-messages.txt 3 "[prog:C]" no-messages &&
    [ "$(grep -c "$held" no-messages.txt)" -eq 1 ] && [ -s no-messages.sqlite ] &&
    pass "unwritable messages file: said at once on its own line, trace written"

# A fatal problem (no raw file can be created) is said at once, on a line of its own.
"$TBDPROF" --sim -o no-raw.sqlite -- "$PARTIAL_LINE_PROGRAM" no-raw-file >no-raw.txt 2>&1
separate_lines no-raw.txt no-raw-file && line_is no-raw.txt 1 "[prog:A][prog:B]" no-raw-file &&
    line_like no-raw.txt 2 "tbdprof: cannot write *: No such file or directory; not recording this process" no-raw-file &&
    line_is no-raw.txt 3 "[prog:C]" no-raw-file && pass "fatal collector message: at once, on its own line"

# stderr a pipe nobody reads when the collector must say something at once: no SIGPIPE, no failure.
"$TBDPROF" --sim -o broken.sqlite -- "$PARTIAL_LINE_PROGRAM" broken-pipe >broken.txt 2>&1
status=$?
[ "$status" -eq 0 ] && grep -q '\[prog:C\]' broken.txt && pass "a broken stderr does not break the program" ||
    fail "broken-pipe: exit $status: $(cat broken.txt)"
finish
