#!/usr/bin/env bash
# The viewer's --screenshot writes through the one output-file helper: never a
# trace (`tbdprof view --screenshot a.sqlite b.sqlite`), never through a symlink onto one, an
# existing file replaced only with --force.
source "$(dirname "$0")/../cli/common.sh"
: "${TBDPROF_VIEWER:?}" "${TBDPROF_BIN_DIR:?}"
cd "$WORK" || exit 1
# pass only when nothing failed since the previous pass.
section_start=0
section_pass() {
    [ "$FAILURES" -eq "$section_start" ] && pass "$1"
    section_start=$FAILURES
}
export QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR="$WORK"
mkdir tmp
export TMPDIR="$WORK/tmp"
"$TBDPROF" --sim -q -o a.sqlite -- "$TBDPROF_BIN_DIR/mlp_train" --iterations 1 >/dev/null 2>&1 || fail "recording a failed"
cp a.sqlite b.sqlite
sum_a=$(sha256sum <a.sqlite)

# The first trace named as the screenshot: refused before anything is loaded; the trace untouched.
expect_status 2 "view --screenshot a.sqlite b.sqlite" -- "$TBDPROF" view --screenshot a.sqlite b.sqlite &&
    stderr_has "saved as .png or .svg"
[ "$(sha256sum <a.sqlite)" = "$sum_a" ] || fail "--screenshot a.sqlite changed the trace"
# A .png name that is a symlink to a trace: not replaced without --force, and with it only the link.
ln -s a.sqlite link.png
expect_status 2 "--screenshot onto a symlink to a trace" -- "$TBDPROF_VIEWER" --screenshot link.png b.sqlite &&
    stderr_has "exists; use --force"
[ "$(sha256sum <a.sqlite)" = "$sum_a" ] || fail "a screenshot through a symlink changed the trace"
# Through a symlink onto one of the traces shown: refused even with --force.
expect_status 2 "--screenshot --force onto a symlink to a shown trace" -- \
    "$TBDPROF_VIEWER" --screenshot link.png --force a.sqlite && stderr_has "is the input"
[ "$(sha256sum <a.sqlite)" = "$sum_a" ] || fail "--force through a symlink changed a shown trace"
"$TBDPROF_VIEWER" --screenshot link.png --force b.sqlite >/dev/null 2>err || fail "--force onto a link failed: $(cat err)"
[ "$(sha256sum <a.sqlite)" = "$sum_a" ] || fail "--force replaced the trace behind the link"
[ -L link.png ] && fail "--force wrote through the link instead of replacing it"
section_pass "symlinks: the trace behind them is never written"

# An existing screenshot: replaced only with --force; a new one is written.
"$TBDPROF_VIEWER" --screenshot shot.png b.sqlite >/dev/null 2>err || fail "a new screenshot failed: $(cat err)"
[ "$(head -c 4 shot.png | tail -c 3)" = "PNG" ] || fail "shot.png is not a PNG"
echo old >old.svg
expect_status 2 "--screenshot onto an existing file" -- "$TBDPROF_VIEWER" --screenshot old.svg b.sqlite &&
    stderr_has "exists; use --force"
[ "$(cat old.svg)" = old ] || fail "an existing file was replaced without --force"
"$TBDPROF_VIEWER" --screenshot old.svg --force b.sqlite >/dev/null 2>err || fail "--force failed: $(cat err)"
grep -q "<svg" old.svg || fail "--force did not write the SVG"
[ -z "$(find . -maxdepth 1 -name '.*.tmp-*' -o -maxdepth 1 -name '.*.lock')" ] || fail "left temporaries: $(ls -a)"
section_pass "existing screenshots need --force; no temporary or lock left"
finish
