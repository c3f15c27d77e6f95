#!/usr/bin/env bash
# Text reports fit the width (COLUMNS, the terminal's, else 100): no line of
# `tbdprof report` is longer, names and stacks are elided; --wide and the JSON keep them whole;
# colour only on a terminal and never with NO_COLOR.
source "$(dirname "$0")/common.sh"
preload_built || { echo "skipped: the collector is not built"; exit 77; }
cd "$WORK" || exit 1
"$TBDPROF" --sim -q -o a.sqlite -- "$TBDPROF_BIN_DIR/mlp_train" --iterations 4 --nvtx >/dev/null 2>&1 || fail "recording"
longest() { awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$1"; }
for columns in 60 100 200; do
    COLUMNS=$columns "$TBDPROF" report a.sqlite >"r$columns.txt" || fail "report at COLUMNS=$columns"
    [ "$(longest "r$columns.txt")" -le $columns ] && pass "COLUMNS=$columns: longest line $(longest "r$columns.txt")" \
        || fail "COLUMNS=$columns: a line of $(longest "r$columns.txt") characters"
done
env -u COLUMNS "$TBDPROF" report a.sqlite >r-default.txt
[ "$(longest r-default.txt)" -le 100 ] && pass "not a terminal, no COLUMNS: 100" || fail "default width: $(longest r-default.txt)"
COLUMNS=100 "$TBDPROF" report a.sqlite --wide >wide.txt
[ "$(longest wide.txt)" -gt 200 ] && pass "--wide keeps the whole stacks ($(longest wide.txt) characters)" || fail "--wide: $(longest wide.txt)"
grep -q "^peak live device memory" r100.txt && grep -q "^  " r60.txt && pass "sentences wrap" || fail "sentences"
# The innermost frame stays; the JSON has the whole stack.
first_frame=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['memory']['largest_at_peak'][0]['stack'][0])" \
    <("$TBDPROF" report a.sqlite --format json) 2>/dev/null)
if [ -n "$first_frame" ]; then
    grep -qF -- "${first_frame:0:12}" r100.txt && pass "the innermost frame is kept" || fail "innermost frame '$first_frame' lost"
fi
grep -q $'\033' r100.txt wide.txt && fail "escape sequences in output that is not a terminal"
if command -v script >/dev/null; then
    COLUMNS=100 script -qec "'$TBDPROF' report a.sqlite" /dev/null >tty.txt 2>&1
    grep -q $'\033\[1m' tty.txt && pass "bold headings on a terminal" || fail "no colour on a terminal"
    NO_COLOR=1 COLUMNS=100 script -qec "'$TBDPROF' report a.sqlite" /dev/null >tty-nc.txt 2>&1
    grep -q $'\033\[1m' tty-nc.txt && fail "colour despite NO_COLOR" || pass "NO_COLOR: no colour"
fi
finish
