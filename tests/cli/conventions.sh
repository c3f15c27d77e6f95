#!/usr/bin/env bash
# Every subcommand has the same conventions: --help and --version (exit 0, text ending
# with a newline), usage errors as one line "tbdprof SUBCOMMAND: ..." with exit 2, suggestions for
# misspelled options and subcommands, --force and --quiet where there is an output.
source "$(dirname "$0")/common.sh"
cd "$WORK" || exit 1
version=$("$TBDPROF" --version)
for sub in record report compare diff check tag import export build; do
    "$TBDPROF" $sub --help >"$WORK/help" 2>&1 || fail "tbdprof $sub --help: exit $?"
    [ "$(tail -c 1 "$WORK/help" | od -An -c | tr -d ' ')" = '\n' ] || fail "tbdprof $sub --help does not end with a newline"
    head -1 "$WORK/help" | grep -q "^usage: tbdprof" || fail "tbdprof $sub --help: first line $(head -1 "$WORK/help")"
    [ "$("$TBDPROF" $sub --version)" = "$version" ] || fail "tbdprof $sub --version"
    "$TBDPROF" $sub --bogus-option x >/dev/null 2>"$WORK/err"
    rc=$?
    [ $rc = 2 ] || fail "tbdprof $sub --bogus-option: exit $rc"
    [ "$(wc -l <"$WORK/err")" = 1 ] || fail "tbdprof $sub --bogus-option: not one line: $(cat "$WORK/err")"
    prefix="tbdprof $sub: "; [ $sub = record ] && prefix="tbdprof: "
    grep -q "^${prefix}unknown option '--bogus-option'" "$WORK/err" || fail "tbdprof $sub: $(cat "$WORK/err")"
done
pass "--help, --version and unknown options alike in every subcommand"
expect_status 2 "misspelled option" -- "$TBDPROF" report x.sqlite --formt json && stderr_has "did you mean --format?"
expect_status 2 "misspelled option, with a value" -- "$TBDPROF" export x.sqlite --outptu=y && stderr_has "did you mean --output?"
expect_status 2 "misspelled subcommand" -- "$TBDPROF" reprot x.sqlite && stderr_has "did you mean report?"
expect_status 2 "bad --format" -- "$TBDPROF" report x.sqlite --format pdf && stderr_has "want text, markdown, json, html"
for sub in report import export tag build; do
    "$TBDPROF" $sub --help | grep -q -- "--quiet" || fail "tbdprof $sub has no --quiet"
done
for sub in record report import export build; do
    "$TBDPROF" $sub --help | grep -q -- "--force" || fail "tbdprof $sub has no --force"
    "$TBDPROF" $sub --help | grep -q -- "-o, --output" || fail "tbdprof $sub has no -o/--output"
done
pass "-o/--output, --force and --quiet where they apply"
# The recorded command's own options are its own, after `--` or after its name.
if preload_built; then
    "$TBDPROF" --sim -q -o a.sqlite -- sh -c 'echo "$@"' sh --format --help >out 2>err || fail "record -- sh ...: $(cat err)"
    [ "$(cat out)" = "--format --help" ] || fail "the program's options reached it as '$(cat out)'"
    ! grep -q "recorded sh" err || fail "--quiet record still printed its summary: $(cat err)"
    "$TBDPROF" --sim -o b.sqlite sh -c 'echo "$1"' sh --force >out 2>/dev/null || fail "record sh ..."
    [ "$(cat out)" = "--force" ] || fail "the program's --force reached it as '$(cat out)'"
    pass "everything after -- (or after the command's name) is the program's"
fi
finish
