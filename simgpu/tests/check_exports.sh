#!/usr/bin/env bash
# The simulated library exports every function the real one exports that a public header declares
# (or that nvcc's generated code calls, modelled by hand), under the same version node (none for
# libcuda.so.1), and nothing the real one does not export but what the public headers declare.
# Names the real library exports but no public header declares (NVIDIA's private entry points between
# its own libraries) are never exported: they are counted.
#   check_exports.sh OURS REAL VERSION_NODE DECLARED_LIST
# REAL missing (no toolkit library): skipped with a message.
set -uo pipefail
ours=$1 real=$2 node=$3 declared=$4
if [ ! -e "$real" ]; then
    echo "skipped: $real not found (no CUDA toolkit library to compare with)"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
names() { nm -D --defined-only "$1" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort -u; }
names "$real" >"$work/real"
names "$ours" >"$work/ours"
sort -u "$declared" >"$work/declared"
failures=0
missing=$(comm -23 "$work/real" "$work/ours" | comm -12 - "$work/declared")
if [ -n "$missing" ]; then
    echo "FAIL: exported by $(basename "$real") and declared, but not exported by ours: $missing"
    failures=1
fi
# Version nodes: every exported function carries NODE (or none at all when NODE is "-").
if [ "$node" = "-" ]; then
    versioned=$(nm -D --defined-only "$ours" | awk '$2 != "A"' | grep -c '@' || true)
    [ "$versioned" -eq 0 ] || { echo "FAIL: $versioned symbols carry a version node"; failures=1; }
else
    unversioned=$(nm -D --defined-only "$ours" | awk '$2 != "A" && $3 !~ /@@'"$node"'$/' | head -5)
    [ -z "$unversioned" ] || { echo "FAIL: symbols without @@$node: $unversioned"; failures=1; }
fi
undeclared=$(comm -23 "$work/real" "$work/declared" | wc -l)
kept=$(comm -23 "$work/real" "$work/declared" | comm -12 - "$work/ours" | wc -l)
echo "$(basename "$ours"): $(wc -l <"$work/ours") exported; real $(wc -l <"$work/real"), of which" \
     "$undeclared are declared in no public header ($kept of them exported: runtime entry points nvcc's code may call; the rest, private, not)"
[ "$failures" -eq 0 ] && echo "OK"
exit "$failures"
