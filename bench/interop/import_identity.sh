#!/usr/bin/env bash
# Imports each trace with two tbdprof builds and compares what they wrote: a sorted dump of every
# table of the imported trace and `tbdprof report --format json`. Used to show that a change to the
# importer (e.g. the streaming parser) leaves the imported content identical.
#
#   bench/interop/import_identity.sh OLD_TBDPROF NEW_TBDPROF TRACE...
#
# Exit status: 0 all identical; 1 a difference (printed); 2 usage.
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: $0 OLD_TBDPROF NEW_TBDPROF TRACE..." >&2
    exit 2
fi
old=$1 new=$2
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/import-identity.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Every table, rows sorted (dump_tables).
source "$(dirname "$0")/../common/dump_tables.sh"

status=0
for trace in "$@"; do
    name=$(basename "$trace")
    for side in old new; do
        bin=${!side}
        # The same path for both, since the report names it.
        "$bin" import "$trace" -o "$work/trace.sqlite" --force --quiet >"$work/$side.import.txt" 2>&1
        dump_tables "$work/trace.sqlite" >"$work/$side.dump"
        "$bin" report "$work/trace.sqlite" --format json >"$work/$side.report.json" 2>/dev/null
        rm -f "$work/trace.sqlite"
    done
    compare_sides "$work" "$name" || status=1
done
exit $status
