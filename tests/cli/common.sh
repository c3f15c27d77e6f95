# Shared by the tbdprof CLI tests. Environment from ctest: TBDPROF (the executable), TRACE_VS_TRUTH
# (the checker), TBDPROF_BIN_DIR (where the samples are).
set -uo pipefail
: "${TBDPROF:?set by ctest}"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-cli-test-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILURES=0

fail() { echo "FAIL: $*"; FAILURES=$((FAILURES + 1)); }
pass() { echo "ok:   $*"; }

# expect_status WANT DESCRIPTION -- COMMAND...: runs COMMAND, checks its exit status, and that it
# wrote exactly one line on stderr when WANT is not 0. Leaves stderr in $WORK/err.
expect_status() {
    local want=$1 what=$2
    shift 3
    "$@" >"$WORK/out" 2>"$WORK/err"
    local got=$?
    if [ "$got" -ne "$want" ]; then
        fail "$what: exit status $got, want $want; stderr: $(cat "$WORK/err")"
        return 1
    fi
    if [ "$want" -ne 0 ] && [ "$(wc -l <"$WORK/err")" -ne 1 ]; then
        fail "$what: want one line on stderr, got: $(cat "$WORK/err")"
        return 1
    fi
    pass "$what (exit $got: $(head -c 160 "$WORK/err" | head -1))"
}

stderr_has() {
    grep -q -- "$1" "$WORK/err" || fail "stderr lacks '$1': $(cat "$WORK/err")"
}

finish() {
    if [ "$FAILURES" -ne 0 ]; then
        echo "$FAILURES failure(s)"
        exit 1
    fi
    echo "all passed"
}

preload_built() { [ -e "$(dirname "$TBDPROF")/../lib/libtbdprof_preload.so" ]; }
