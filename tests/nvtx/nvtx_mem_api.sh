#!/usr/bin/env bash
# Records nvtx_mem_program (every call of NVTX's memory extension the collector records, on host
# memory) and checks the trace's memory_heaps and memory_regions rows against what it did (its header
# comment lists the calls): one row per region extent, names by handle, pointer, wide and registered
# string, a resize, unregistration by handle, heap reset and unregistration, the process-wide heap.
source "$(dirname "$0")/common.sh"
: "${NVTX_MEM_PROGRAM:?}"
cd "$WORK" || exit 1
"$TBDPROF" --sim -o trace.sqlite -- "$NVTX_MEM_PROGRAM" >out 2>err
status=$?
[ "$status" -eq 0 ] || { cat err; fail "tbdprof/nvtx_mem_program exited $status"; finish; }

expect_equal "one heap: handle, bytes, usage, name, domain, no allocation, unregistered" \
    "$(query trace.sqlite "SELECT handle, bytes, usage, name, domain, coalesce(allocation, 'none'), unregister_ns >= register_ns FROM memory_heaps")" \
    "$(printf '1\t65536\tsub_allocator\thost heap\tmemtest\tnone\t1')"
want=$(printf '%s\n' \
    $'0\t1024\tweights:a\tunregistered\t1' \
    $'4096\t2048\tgradients/b\tresized\t1' \
    $'8192\t512\tc\theap_reset\t1' \
    $'4096\t4096\tgradients/b\theap_reset\t1' \
    $'16384\t256\tworkspace\theap_unregistered\t1' \
    $'256\t64\t-\theap_reset\tprocess-wide')
expect_equal "regions: offset, bytes, name, how each ended, heap" \
    "$(query trace.sqlite "SELECT r.address - h.address, r.bytes, coalesce(r.name, '-'), coalesce(r.end_reason, '-'),
                                  coalesce(r.heap, 'process-wide')
                           FROM memory_regions r, memory_heaps h ORDER BY r.id")" "$want"
expect_none "every region ends after it begins" \
    "$(query trace.sqlite "SELECT id FROM memory_regions WHERE unregister_ns IS NULL OR unregister_ns < register_ns")"
expect_none "a resize starts the next row when the previous ends" \
    "$(query trace.sqlite "SELECT a.id FROM memory_regions a JOIN memory_regions b ON b.id = 4 AND a.id = 2
                           WHERE a.unregister_ns != b.register_ns")"
expect_none "no dropped events" "$(query trace.sqlite "SELECT cause, count FROM dropped_events")"
finish
