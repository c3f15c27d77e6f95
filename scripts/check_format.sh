#!/usr/bin/env bash
# The formatting rule (.clang-format) on the lines a change touched, as CI checks it: `git clang-format`
# over the C++ and CUDA lines changed between BASE and the working tree. Lines nobody touched keep
# their layout, so a check never forces a whole-file reformat onto a small change.
#   scripts/check_format.sh [BASE]   BASE: a commit; default the one in .ci/format-base, from which on
#                                    the rule holds
# Exit 0: every changed line is formatted. 1: names the files and prints the diff that would fix them
# (run `git clang-format --extensions c,cc,cpp,h,hpp,cu,cuh BASE` to apply it). 77: cannot check here (no git history back to BASE, e.g.
# a shallow clone, or no git-clang-format), said in one line.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-$(cat .ci/format-base 2>/dev/null || true)}
if [ -z "$base" ]; then
    echo "check_format: no BASE given and .ci/format-base is missing" >&2
    exit 2
fi
if ! command -v git-clang-format >/dev/null 2>&1; then
    echo "check_format: git-clang-format is not installed (Debian package clang-format); not checked"
    exit 77
fi
if ! git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
    echo "check_format: commit $base is not in this clone's history (shallow clone?); not checked"
    exit 77
fi
out=$(git clang-format --diff --extensions c,cc,cpp,h,hpp,cu,cuh "$base" 2>&1) || {
    echo "check_format: git clang-format failed: $out" >&2
    exit 2
}
case $out in
    "no modified files to format" | "clang-format did not modify any files" | "")
        echo "check_format: every line changed since ${base:0:12} follows .clang-format"
        exit 0 ;;
esac
files=$(grep -E '^\+\+\+ b/' <<<"$out" | sed 's|^+++ b/||' | sort -u | tr '\n' ' ')
echo "check_format: lines changed since ${base:0:12} do not follow .clang-format in: $files"
echo "check_format: run 'git clang-format --extensions c,cc,cpp,h,hpp,cu,cuh $base' to fix them; the diff:"
echo "$out"
exit 1
