#!/usr/bin/env bash
# help.sh WORK_DIR TOOL...: each TOOL, run in an empty WORK_DIR, answers --help and -h with a usage
# text on stdout and exit status 0, writes no file, and refuses an unknown option with exit status 2
# and a message on stderr (again writing no file).
set -u
work=$1
shift
status=0
fail() {
    echo "FAIL: $*" >&2
    status=1
}
for tool in "$@"; do
    name=$(basename "$tool")
    for option in --help -h; do
        rm -rf "$work" && mkdir -p "$work"
        out=$(cd "$work" && TMPDIR="$work" "$tool" "$option" 2>"$work/../help-stderr")
        rc=$?
        [ "$rc" = 0 ] || fail "$name $option: exit status $rc"
        echo "$out" | grep -qi "usage\|$name" || fail "$name $option: no usage text on stdout"
        [ -z "$(ls -A "$work")" ] || fail "$name $option wrote files: $(ls -A "$work")"
    done
    rm -rf "$work" && mkdir -p "$work"
    (cd "$work" && TMPDIR="$work" "$tool" --no-such-option >/dev/null 2>"$work/../help-stderr")
    rc=$?
    [ "$rc" = 2 ] || fail "$name --no-such-option: exit status $rc (want 2)"
    grep -q "no-such-option" "$work/../help-stderr" || fail "$name --no-such-option: the message does not name it"
    [ -z "$(ls -A "$work")" ] || fail "$name --no-such-option wrote files: $(ls -A "$work")"
    echo "$name: --help, -h and an unknown option answered"
done
rm -rf "$work" "$work/../help-stderr"
exit $status
