#!/usr/bin/env bash
# usage: match_simgpu_truth.sh BINARY [options...]
# Runs a sample on the simulated GPU with both ground truths on: the sample's labels
# (TBD_SAMPLE_LABELS) and the simulated driver's record of every allocation (TBDSIM_TRUTH, lines
# "alloc<TAB>pid<TAB>correlation<TAB>stream<TAB>time<TAB>kind<TAB>bytes<TAB>address"). Passes when
# every labelled allocation is a device allocation the driver saw, at the same address and size, and
# every labelled free is a free the driver saw: the labels describe the real API traffic.
set -u
binary=$1
shift
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
TBD_SAMPLE_LABELS=$scratch/labels TBDSIM_TRUTH=$scratch/truth "$binary" "$@" >/dev/null || {
    echo "match_simgpu_truth: $binary $* failed" >&2
    exit 1
}
awk -F'\t' '
NR == FNR {
    if ($1 == "alloc" && ($6 == "device" || $6 == "device_async")) allocated[$8 " " $7]++
    if ($1 == "free" && ($6 == "device" || $6 == "device_async")) freed[$8]++
    next
}
$1 == "alloc" {
    if (allocated[$2 " " $3]-- <= 0) { print "labelled alloc not seen by the driver: " $0 > "/dev/stderr"; bad = 1 }
    labelled_allocs++
}
$1 == "free" {
    if (freed[$2]-- <= 0) { print "labelled free not seen by the driver: " $0 > "/dev/stderr"; bad = 1 }
}
END {
    if (labelled_allocs == 0) { print "no labelled allocations" > "/dev/stderr"; bad = 1 }
    if (!bad) printf "match_simgpu_truth: %d labelled allocations all match the driver record\n", labelled_allocs
    exit bad
}' "$scratch/truth" "$scratch/labels"
