#!/usr/bin/env bash
# PyTorch runs recorded on a real GPU (an H200, 2026-12-04; docs/real-gpu.md), re-tagged by this
# build and scored against their labels: torch.profiler's categories corrected by the script
# (reconciled.labels), or for runs without torch.profiler the script's own notes (script.labels). Each configuration must reach its floor in floors.tsv: the figure this tagger
# reached when the floor was last raised, so a change that loses ground on real recordings fails here
# even when the simulated GPU's figures hold.
#   score_real_traces.sh BUILD_DIR ARCHIVE FLOORS
set -uo pipefail
[ $# -eq 3 ] || { echo "usage: score_real_traces.sh BUILD_DIR ARCHIVE FLOORS" >&2; exit 2; }
build=$1 archive=$2 floors=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-realgpu-XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
# tar needs the xz program for .tar.xz; Python's tarfile does not (a machine may lack xz-utils).
tar -C "$work" -xJf "$archive" 2>/dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$archive" "$work" ||
    { echo "cannot unpack $archive" >&2; exit 2; }
failures=0 checked=0
while read -r name labels floor _; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    trace="$work/$name/run.sqlite"
    [ -f "$trace" ] || { echo "FAIL $name: not in $archive"; failures=$((failures + 1)); continue; }
    if ! "$build/bin/tbdprof" tag "$trace" -q >"$work/$name/tag.log" 2>&1; then
        echo "FAIL $name: tbdprof tag failed"; cat "$work/$name/tag.log"; failures=$((failures + 1)); continue
    fi
    accuracy=$("$build/bin/tbdprof-tag-accuracy" "$trace" "$work/$name/$labels" |
               sed -n 's/^accuracy \([0-9.]*\) of .*/\1/p' | head -1)
    if [ -z "$accuracy" ]; then
        echo "FAIL $name: no accuracy from tbdprof-tag-accuracy"; failures=$((failures + 1)); continue
    fi
    checked=$((checked + 1))
    if awk -v a="$accuracy" -v f="$floor" 'BEGIN { exit !(a + 1e-9 >= f) }'; then
        echo "ok   $name $accuracy (floor $floor)"
    else
        echo "FAIL $name $accuracy below its floor $floor"; failures=$((failures + 1))
    fi
done <"$floors"
echo "$checked configurations scored, $failures failed"
[ "$checked" -gt 0 ] && [ "$failures" -eq 0 ]
