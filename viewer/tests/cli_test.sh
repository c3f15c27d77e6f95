#!/bin/sh
# tbdprof-viewer from the command line: --screenshot of every view (PNG, and SVG for one), `tbdprof
# view` passing its arguments on, and bad input refused with the CLI's own sentence, exit 2 and no
# file written.   cli_test.sh BUILD_DIR SAMPLES_DIR WORK_DIR
set -u
build=$1
samples=$2
work=$3
viewer=$build/bin/tbdprof-viewer
trace=$samples/mlp.sqlite
[ -f "$trace" ] || { echo "skipped: no sample trace in $samples"; exit 77; }
rm -rf "$work" && mkdir -p "$work" || exit 1
export QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR="$work"
status=0
fail() { echo "FAIL: $*"; status=1; }

for view in summary timeline memory kernels compare; do
    out=$work/$view.png
    "$viewer" --screenshot "$out" --view "$view" --size 1200x700 "$trace" "$samples/mlp_adam_nvtx.sqlite" \
        >"$work/$view.log" 2>&1 || fail "--screenshot --view $view: $(cat "$work/$view.log")"
    [ "$(head -c 4 "$out" | tail -c 3)" = "PNG" ] || fail "$view: $out is not a PNG"
done
"$viewer" --screenshot "$work/timeline.svg" --view timeline "$trace" >/dev/null 2>&1 || fail "SVG export"
grep -q "<svg" "$work/timeline.svg" 2>/dev/null || fail "timeline.svg is not SVG"
# The Summary's communication section: on the two-rank dp_train sample, a heading and a line per rank;
# none for the MLP, which has no NCCL kernels.
if [ -f "$samples/dp_train.sqlite" ]; then
    "$viewer" --screenshot "$work/dp_summary.svg" --view summary "$samples/dp_train.sqlite" >/dev/null 2>&1 ||
        fail "dp_train summary SVG"
    grep -q "Communication: [0-9.]*% overlapped with computation" "$work/dp_summary.svg" ||
        fail "dp_train summary has no communication heading"
    [ "$(grep -c "rank [01] · GPU [0-9]* · .* exposed" "$work/dp_summary.svg")" -eq 2 ] ||
        fail "dp_train summary: not one communication line per rank"
fi
"$viewer" --screenshot "$work/mlp_summary.svg" --view summary "$trace" >/dev/null 2>&1 || fail "mlp summary SVG"
grep -q "Communication:" "$work/mlp_summary.svg" && fail "mlp summary shows a communication section"
"$build/bin/tbdprof" view --screenshot "$work/via-cli.png" --view memory "$trace" >/dev/null 2>&1 || fail "tbdprof view"
[ -s "$work/via-cli.png" ] || fail "tbdprof view wrote no screenshot"

# Bad input: the viewer's message is the one `tbdprof report` prints, after the program name.
printf 'not a trace at all' >"$work/text.sqlite"
: >"$work/empty.sqlite"
head -c 40000 "$trace" >"$work/truncated.sqlite"
cp "$trace" "$work/newer.sqlite" && sqlite3 "$work/newer.sqlite" "PRAGMA user_version = 999"
for bad in text empty truncated newer missing; do
    file=$work/$bad.sqlite
    cli=$("$build/bin/tbdprof" report "$file" 2>&1 >/dev/null | sed 's/^tbdprof report: //')
    "$viewer" --screenshot "$work/bad-$bad.png" "$file" >"$work/bad.out" 2>"$work/bad.err"
    rc=$?
    mine=$(grep -v '^QStandardPaths' "$work/bad.err" | sed 's/^tbdprof-viewer: //')
    [ "$rc" -eq 2 ] || fail "$bad: exit status $rc, expected 2"
    [ -n "$cli" ] && [ "$mine" = "$cli" ] || fail "$bad: viewer said '$mine', the CLI '$cli'"
    [ ! -e "$work/bad-$bad.png" ] || fail "$bad: a screenshot was written"
done
# --whatif: the memory view with a scenario's predicted timeline; bad what-if options are a usage error.
"$viewer" --screenshot "$work/whatif.png" --view memory --whatif "--batch-scale 2" "$trace" >"$work/whatif.log" 2>&1 ||
    fail "--whatif screenshot: $(cat "$work/whatif.log")"
[ "$(head -c 4 "$work/whatif.png" | tail -c 3)" = "PNG" ] || fail "--whatif: no PNG"
"$viewer" --screenshot "$work/whatif-bad.png" --view memory --whatif "--batch-scale" "$trace" >/dev/null 2>"$work/bad.err"
[ $? -eq 2 ] && grep -q "^tbdprof-viewer: --whatif" "$work/bad.err" || fail "bad --whatif: $(cat "$work/bad.err")"
[ ! -e "$work/whatif-bad.png" ] || fail "bad --whatif: a screenshot was written"
"$viewer" --screenshot "$work/x.png" --view nonsense "$trace" >/dev/null 2>&1
[ $? -eq 2 ] || fail "--view nonsense is not a usage error"
[ $status -eq 0 ] && echo "viewer CLI: all checks passed"
exit $status
