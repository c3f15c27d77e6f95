#!/usr/bin/env bash
# A CI step: records a short run with tbdprof, writes the reports, and gates it against a budget.
#
#   scripts/ci/profile-gate.sh OUT_DIR BUDGET_FILE [--record-arg ARG]... -- COMMAND...
#
# Writes OUT_DIR/trace.sqlite, report.md, report.html, report.json and junit.xml (the budget check,
# for the CI's test view). When GITHUB_STEP_SUMMARY is set (GitHub Actions) the markdown report is
# appended to it. Exit status: that of `tbdprof check` (0 within budget, 1 outside it, 2 bad input),
# or the recording's when the recording itself failed. tbdprof is taken from $TBDPROF, else PATH.
set -uo pipefail
usage() { echo "usage: profile-gate.sh OUT_DIR BUDGET_FILE [--record-arg ARG]... -- COMMAND..." >&2; exit 2; }
[ $# -ge 4 ] || usage
out=$1 budget=$2
shift 2
record_args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    [ "$1" = "--record-arg" ] && [ $# -ge 2 ] || usage
    record_args+=("$2"); shift 2
done
[ "${1:-}" = "--" ] && [ $# -ge 2 ] || usage
shift
tbdprof=${TBDPROF:-$(command -v tbdprof || true)}
[ -x "$tbdprof" ] || { echo "profile-gate: tbdprof not found (set TBDPROF or put it on PATH)" >&2; exit 2; }
[ -r "$budget" ] || { echo "profile-gate: cannot read the budget file $budget" >&2; exit 2; }
mkdir -p "$out" || exit 2

"$tbdprof" record "${record_args[@]}" --force -o "$out/trace.sqlite" -- "$@"
rc=$?
[ "$rc" -eq 0 ] || { echo "profile-gate: the recorded command failed (exit $rc)" >&2; exit "$rc"; }
for format in markdown html json; do
    ext=$format; [ "$format" = markdown ] && ext=md
    "$tbdprof" report "$out/trace.sqlite" --format "$format" --force -o "$out/report.$ext" || exit 2
done
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat "$out/report.md" >>"$GITHUB_STEP_SUMMARY"
fi
"$tbdprof" check "$out/trace.sqlite" --budget "$budget" --force --junit "$out/junit.xml"
