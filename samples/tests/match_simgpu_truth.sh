#!/usr/bin/env bash
# usage: match_simgpu_truth.sh BINARY [options...]
# Runs a sample on the simulated GPU with both ground truths on: the sample's labels
# (TBD_SAMPLE_LABELS) and the simulated driver's record of every allocation (TBDSIM_TRUTH, lines
# "alloc<TAB>pid<TAB>correlation<TAB>stream<TAB>time<TAB>kind<TAB>bytes<TAB>address"). Passes when
# every labelled allocation is a device allocation the driver saw, at the same address and size, and
# every labelled free is a free the driver saw: the labels describe the real API traffic. In pool mode
# (--alloc pool) that holds for the segments (segment / segment_free lines); the tensors inside them
# make no API call and must instead lie inside a labelled segment the driver allocated.
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
function hex(text,    i, value) {
    value = 0
    for (i = 3; i <= length(text); i++) value = value * 16 + index("0123456789abcdef", substr(text, i, 1)) - 1
    return value
}
$1 == "segment" {
    if (allocated[$2 " " $3]-- <= 0) { print "labelled segment not seen by the driver: " $0 > "/dev/stderr"; bad = 1 }
    segment_size[$2] = $3 + 0
    segments++
}
$1 == "segment_free" {
    if (freed[$2]-- <= 0) { print "labelled segment free not seen by the driver: " $0 > "/dev/stderr"; bad = 1 }
    delete segment_size[$2]
}
$1 == "alloc" && segments {
    inside = 0
    for (s in segment_size) inside = inside || (hex($2) >= hex(s) && hex($2) + $3 <= hex(s) + segment_size[s])
    if (!inside) { print "labelled tensor outside the live segments: " $0 > "/dev/stderr"; bad = 1 }
    labelled_allocs++
}
$1 == "alloc" && !segments {
    if (allocated[$2 " " $3]-- <= 0) { print "labelled alloc not seen by the driver: " $0 > "/dev/stderr"; bad = 1 }
    labelled_allocs++
}
$1 == "free" && !segments {
    if (freed[$2]-- <= 0) { print "labelled free not seen by the driver: " $0 > "/dev/stderr"; bad = 1 }
}
END {
    if (labelled_allocs == 0) { print "no labelled allocations" > "/dev/stderr"; bad = 1 }
    if (!bad) printf "match_simgpu_truth: %d labelled allocations all match the driver record\n", labelled_allocs
    exit bad
}' "$scratch/truth" "$scratch/labels"
