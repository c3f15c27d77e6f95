#!/usr/bin/env bash
source "$(dirname "$0")/common.sh"
out=$("$TBDPROF" --version) || fail "--version failed"
[[ $out =~ ^tbdprof\ [0-9]+\.[0-9]+\.[0-9]+\ \(trace\ format\ [0-9]+\)$ ]] || fail "--version printed '$out'"
pass "--version: $out"
"$TBDPROF" --help >"$WORK/help" || fail "--help failed"
grep -q "usage: tbdprof \[record\] \[-o FILE\] \[--sim\[=MODEL\]\] \[--stacks N\] \[--force\] \[--framework=NAME\]" "$WORK/help" \
    || fail "--help lacks the usage line"
grep -q "tbdprof report|compare|diff|check|tag|import|export" "$WORK/help" || fail "--help lacks the subcommands"
for sub in report compare diff check tag import export; do
    "$TBDPROF" $sub --help >/dev/null || fail "tbdprof $sub --help failed"
done
"$TBDPROF" record --help >/dev/null || fail "record --help failed"
pass "--help"
finish
