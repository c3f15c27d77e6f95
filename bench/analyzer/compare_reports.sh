#!/bin/sh
# Whether two builds of tbdprof write the same reports: `tbdprof report` in text and in JSON of each
# trace by both, compared byte for byte (docs/benchmarks.md, "Scale"). Traces are only read.
#   bench/analyzer/compare_reports.sh OLD_TBDPROF NEW_TBDPROF TRACE...
# Prints one line per difference (and for a trace both builds refuse with different messages), then
# how many reports were compared; exits 1 when any differ. Extra `report` options: REPORT_OPTIONS.
set -eu
case "${1:-}" in
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "$(basename "$0"): unknown option $1 (--help for usage)" >&2; exit 2 ;;
esac
[ $# -ge 3 ] || { echo "usage: compare_reports.sh OLD_TBDPROF NEW_TBDPROF TRACE..." >&2; exit 2; }
old=$1 new=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
compared=0 differ=0
for trace in "$@"; do
    for format in text json; do
        # A refused trace is compared by its message: both builds must refuse it alike.
        # shellcheck disable=SC2086
        "$old" report "$trace" --format "$format" --quiet ${REPORT_OPTIONS:-} -o "$work/old" >"$work/old.err" 2>&1 ||
            cp "$work/old.err" "$work/old"
        # shellcheck disable=SC2086
        "$new" report "$trace" --format "$format" --quiet ${REPORT_OPTIONS:-} -o "$work/new" >"$work/new.err" 2>&1 ||
            cp "$work/new.err" "$work/new"
        compared=$((compared + 1))
        if ! cmp -s "$work/old" "$work/new"; then
            differ=$((differ + 1))
            echo "differs ($format): $trace"
            diff "$work/old" "$work/new" | head -6 | sed 's/^/    /'
        fi
        rm -f "$work/old" "$work/new"
    done
done
echo "$compared reports compared, $differ differ"
[ "$differ" -eq 0 ]
