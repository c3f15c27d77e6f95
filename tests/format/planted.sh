#!/usr/bin/env bash
# scripts/check_format.sh catches what it is there to catch: in a scratch repository with the
# project's .clang-format, a committed base, then a formatted change (passes), a misformatted changed
# line (fails, naming the file), an untouched misformatted line (passes: only changed lines count), a
# file moved with `git mv` (passes: a move touches no line) and a misformatted line changed in it
# (fails, naming it by its new path), and a base that is not in the history (skips with 77).
set -euo pipefail
command -v clang-format-diff >/dev/null || { echo "planted: clang-format-diff is not installed (Debian package clang-format); skipped"; exit 77; }
src=${1:?usage: planted.sh SOURCE_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
git init -q repo && cd repo
mkdir -p scripts .ci
cp "$src/.clang-format" . && cp "$src/scripts/check_format.sh" scripts/
printf 'int old_layout( ){return 0;}\n\nint f() {\n    return 1;\n}\n' >a.cpp
git add . && git -c user.email=t@t -c user.name=t commit -qm base
git rev-parse HEAD >.ci/format-base

expect() {  # expect STATUS WHAT
    local want=$1 what=$2 got=0
    scripts/check_format.sh >"$work/out" 2>&1 || got=$?
    if [[ $got != "$want" ]]; then
        echo "planted: $what: expected exit $want, got $got"; cat "$work/out"; exit 1
    fi
    echo "planted: $what: exit $got, as expected"
}
expect 0 "nothing changed"
printf 'int old_layout( ){return 0;}\n\nint f() {\n    return 2;\n}\n' >a.cpp
expect 0 "a formatted change beside an untouched misformatted line"
printf 'int old_layout( ){return 0;}\n\nint f() {\n    return   2 ;\n}\n' >a.cpp
expect 1 "a misformatted changed line"
grep -q 'do not follow .clang-format in: a.cpp' "$work/out" || { echo "planted: the file is not named"; exit 1; }
git checkout -q a.cpp && git mv a.cpp moved.cpp
expect 0 "a file moved with its untouched misformatted line"
printf 'int old_layout( ){return 0;}\n\nint f() {\n    return   2 ;\n}\n' >moved.cpp
expect 1 "a misformatted line changed in a moved file"
grep -q 'do not follow .clang-format in: moved.cpp' "$work/out" || { echo "planted: the moved file is not named"; exit 1; }
printf '0000000000000000000000000000000000000000\n' >.ci/format-base
expect 77 "a base not in the history"
