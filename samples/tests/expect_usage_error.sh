#!/usr/bin/env bash
# usage: expect_usage_error.sh BINARY [options...]
# Passes when BINARY rejects the options: exit status 2, exactly one line on stderr naming the
# program and saying "error:", nothing on stdout, and no label file written.
set -u
binary=$1
shift
name=$(basename "$binary")
command_line="$name $*"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
TBD_SAMPLE_LABELS=$scratch/labels "$binary" "$@" >"$scratch/out" 2>"$scratch/err"
status=$?
cat "$scratch/err"
fail() { echo "expect_usage_error: $command_line: $1" >&2; exit 1; }
((status == 2)) || fail "exit status $status, expected 2"
[[ $(wc -l <"$scratch/err") -eq 1 ]] || fail "expected exactly one line on stderr"
grep -q "^$name: error: " "$scratch/err" || fail "stderr does not start with '$name: error: '"
[[ ! -s $scratch/out ]] || fail "unexpected output on stdout"
[[ ! -e $scratch/labels ]] || fail "a label file was written for a rejected command line"
echo "expect_usage_error: rejected as expected"
