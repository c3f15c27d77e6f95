#!/usr/bin/env bash
# An import streams its JSON (docs/interop.md, "Parser and speed"): a generated Kineto trace of
# SIZE_MB megabytes (the bench's synthetic training steps: operators, launches, kernels, flows,
# memory, a ProfilerStep every 1000 operators) imports with peak RSS well below the size of its JSON,
# plain and gzip. Before streaming the whole text was held, plus the parsed events: 533 MB of RSS for
# 200 MB of JSON. What remains grows with the events kept, not with the text (~0.55 B of RSS per
# byte of this trace's JSON, 2026-12-02).
#   bounded_memory.sh BENCH_TOOL IMPORT_TOOL [SIZE_MB]
set -euo pipefail
bench=$1 tool=$2 size_mb=${3:-120}
[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time is missing"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bounded-memory.XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
for name in trace.json trace.json.gz; do
    "$bench" --generate "$work/$name" "$size_mb"
    /usr/bin/time -f "%M" -o "$work/rss" "$tool" import "$work/$name" -o "$work/out.sqlite" --force --quiet
    rss_kb=$(tail -n 1 "$work/rss")
    json_kb=$((size_mb * 1000000 / 1024))
    # Three quarters of the JSON: holding the text alone (as before) is over one.
    limit_kb=$((json_kb * 3 / 4))
    kernels=$(sqlite3 "$work/out.sqlite" "SELECT count(*) FROM kernels" 2>/dev/null || echo "?")
    if [ "$rss_kb" -lt "$limit_kb" ]; then
        echo "ok: $name ($size_mb MB of JSON, $kernels kernels): peak RSS $((rss_kb / 1024)) MiB < $((limit_kb / 1024)) MiB"
    else
        echo "FAIL: $name ($size_mb MB of JSON): peak RSS $((rss_kb / 1024)) MiB, over $((limit_kb / 1024)) MiB"
        status=1
    fi
    rm -f "$work/$name" "$work/out.sqlite"
done
exit $status
