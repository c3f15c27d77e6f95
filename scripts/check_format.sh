#!/usr/bin/env bash
# The formatting rule (.clang-format) on the lines a change touched, as CI checks it: clang-format-diff
# over the C++ and CUDA lines changed between BASE and the working tree. Lines nobody touched keep
# their layout, so a check never forces a whole-file reformat onto a small change; a file moved with
# `git mv` is a rename (git diff -M), not new lines, so moving a file touches none of its lines
# (`git clang-format` diffs without rename detection and counted every line of a moved file).
#   scripts/check_format.sh [BASE]   BASE: a commit; default the one in .ci/format-base, from which on
#                                    the rule holds
# Exit 0: every changed line is formatted. 1: names the files and prints the diff that would fix them
# (apply it with `git diff -M -U0 BASE | clang-format-diff -p1 -i`). 77: cannot check here (no git
# history back to BASE, e.g. a shallow clone, or no clang-format-diff), said in one line.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-$(cat .ci/format-base 2>/dev/null || true)}
if [ -z "$base" ]; then
    echo "check_format: no BASE given and .ci/format-base is missing" >&2
    exit 2
fi
if ! command -v clang-format-diff >/dev/null 2>&1; then
    echo "check_format: clang-format-diff is not installed (Debian package clang-format); not checked"
    exit 77
fi
if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
    echo "check_format: commit $base is not in this clone's history (shallow clone?); not checked"
    exit 77
fi
sources=('*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh')
changes=$(git diff -M --no-color --no-ext-diff -U0 "$base" -- "${sources[@]}")
out=$(clang-format-diff -p1 <<<"$changes" 2>&1) || {
    echo "check_format: clang-format-diff failed: $out" >&2
    exit 2
}
case $out in
    "")
        echo "check_format: every line changed since ${base:0:12} follows .clang-format"
        exit 0 ;;
esac
files=$(grep -E '^\+\+\+ ' <<<"$out" | sed -E 's/^\+\+\+ (b\/)?//; s/\t.*//' | sort -u | tr '\n' ' ')
echo "check_format: lines changed since ${base:0:12} do not follow .clang-format in: $files"
echo "check_format: run 'git diff -M -U0 $base | clang-format-diff -p1 -i' to fix them; the diff:"
echo "$out"
exit 1
