#!/usr/bin/env python3
"""Checks the analyzer's memory breakdown at the peak of a pooled run against ground truth.

usage: pool_breakdown.py TRACE REPORT.json LABELS MAX_ERROR

Truth at the report's peak moment: the labelled tensors alive then, per category (label times are
CLOCK_MONOTONIC ns, the trace's are relative to run.start_monotonic_ns); labelled segment bytes no
tensor holds are unattributed pool space, which the report shows as 'untagged'. Allocations that
are not labelled segments (a library's own buffers) count on both sides with the trace's category.
Passes when every category differs from the truth by at most MAX_ERROR of the peak, and the report
says the breakdown is at sub-range level.
"""
import json
import sqlite3
import sys

CATEGORIES = ["weights", "gradients", "optimizer_state", "activations", "workspace", "input", "other", "untagged"]


def main():
    trace, report_path, labels_path, max_error = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    report = json.load(open(report_path))
    memory = report["memory"]
    peak_ns = round(memory["peak_s"] * 1e9)
    db = sqlite3.connect(trace)
    start = db.execute("SELECT start_monotonic_ns FROM run").fetchone()[0]
    moment = start + peak_ns
    # The peak is often a segment's cudaMalloc; its label is written when the call returns, a little
    # after the trace's time of the call. Move the moment to that label.
    at_peak = {row[0] for row in db.execute("SELECT address FROM allocations WHERE alloc_ns = ?", (peak_ns,))}
    for line in open(labels_path):
        event, address, _, _, time = line.rstrip("\n").split("\t")
        if event == "segment" and int(address, 16) in at_peak and int(time) >= moment:
            moment = int(time)
            break

    truth = dict.fromkeys(CATEGORIES, 0)
    segments, tensors, labelled = {}, {}, set()
    for line in open(labels_path):
        event, address, size, category, time = line.rstrip("\n").split("\t")
        if event == "segment":
            labelled.add(int(address, 16))
        if int(time) > moment:
            continue
        if event == "segment":
            segments[address] = int(size)
        elif event == "segment_free":
            segments.pop(address, None)
        elif event == "alloc":
            tensors[address] = (int(size), category)
        elif event == "free":
            tensors.pop(address, None)
    for size, category in tensors.values():
        truth[category] += size
    truth["untagged"] += sum(segments.values()) - sum(size for size, _ in tensors.values())

    rows = db.execute(
        "SELECT a.address, a.bytes, coalesce(c.category, 'untagged') FROM allocations a "
        "LEFT JOIN allocation_categories c ON c.allocation = a.id "
        "WHERE a.kind IN ('device', 'device_async', 'managed') AND a.alloc_ns <= ?1 "
        "AND (a.free_ns IS NULL OR a.free_ns > ?1)", (peak_ns,))
    for address, size, category in rows:
        if address not in labelled:
            truth[category] += size

    peak = memory["peak_bytes"]
    status = 0
    print(f"peak {peak} bytes at {peak_ns} ns")
    print(f"{'category':16} {'report':>12} {'truth':>12} {'error':>8}")
    for category in CATEGORIES:
        got, want = memory["at_peak"][category], truth[category]
        error = abs(got - want) / peak
        print(f"{category:16} {got:12d} {want:12d} {error:8.4f}")
        if error > max_error:
            status = 1
    if not any("sub-range level" in note for note in report.get("notes", [])):
        print("the report does not say the breakdown is at sub-range level")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
