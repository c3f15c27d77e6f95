"""What PyTorch's own tools cannot see in a run that tbdprof recorded, in bytes.

Two kinds: device allocations in the trace that PyTorch never made (no allocation or segment of its
allocator covers them while they live: what cuBLAS, cuDNN and other libraries allocate themselves),
and memory PyTorch made but its memory profiler could not categorize ('-' in the oracle labels: the
workspaces PyTorch allocates for cuBLAS and cuDNN, which no tensor owns). Each is given with the
category tbdprof gave it, and whether a library call used it as its workspace.
"""

import collections
import sqlite3


def pytorch_ranges(labels_path):
    """[(start, end, alloc_ns, free_ns, category)] of PyTorch's segments and whole allocations (monotonic ns)."""
    ranges, live = [], {}
    segments = []
    with open(labels_path) as labels:
        for line in labels:
            kind, address, size, category, when = line.rstrip("\n").split("\t")[:5]
            if kind == "span":
                continue
            address, size, when = int(address, 16), int(size), int(when)
            if kind == "segment":
                segments.append((address, address + size))
                ranges.append([address, address + size, when, None, "segment"])
            elif kind == "alloc" and not any(s <= address < e for s, e in segments):
                live[address] = [address, address + size, when, None, category]
                ranges.append(live[address])
            elif kind == "free" and address in live:
                live.pop(address)[3] = when
    return ranges


def unseen_by_pytorch(trace_path, labels_path):
    """{'outside_pytorch': {category: bytes}, 'library_workspaces': bytes, 'uncategorized_by_pytorch': {...}}."""
    ranges = pytorch_ranges(labels_path)
    db = sqlite3.connect(f"file:{trace_path}?mode=ro", uri=True)
    start = db.execute("SELECT start_monotonic_ns FROM run").fetchone()[0]
    workspaces = {row[0] for row in db.execute(
        "SELECT DISTINCT workspace_allocation FROM library_calls WHERE workspace_allocation IS NOT NULL")}
    outside, library_ws = collections.Counter(), 0
    uncategorized = collections.Counter()
    for ident, address, size, alloc_ns, free_ns, kind, category in db.execute(
            "SELECT id, address, bytes, alloc_ns, free_ns, kind, category FROM memory_allocations "
            "WHERE kind IN ('device', 'device_async', 'device_mapped')"):
        begin, end = alloc_ns + start, (free_ns + start) if free_ns is not None else float("inf")
        owner = next((r for r in ranges if r[0] <= address < r[1] and r[2] <= end and
                      (r[3] is None or r[3] >= begin)), None)
        if owner is None:
            outside[category or "untagged"] += size
            library_ws += size if ident in workspaces else 0
        elif owner[4] == "-":
            uncategorized[("library workspace " if ident in workspaces else "") + (category or "untagged")] += size
    return {"outside_pytorch": dict(outside), "outside_pytorch_library_workspaces": library_ws,
            "uncategorized_by_pytorch": dict(uncategorized)}


def uncategorized_by_pytorch(trace_path, labels_path):
    """For labels built over the trace's own allocations (score.py, labels_from_trace: the allocator
    told torch.profiler nothing): bytes of the allocations no categorized tensor use reached, by
    tbdprof's tag, library workspaces apart."""
    db = sqlite3.connect(f"file:{trace_path}?mode=ro", uri=True)
    workspaces = {row[0] for row in db.execute(
        "SELECT DISTINCT workspace_allocation FROM library_calls WHERE workspace_allocation IS NOT NULL")}
    rows = list(db.execute("SELECT id, bytes, category FROM memory_allocations "
                           "WHERE kind IN ('device', 'device_async', 'device_mapped') ORDER BY alloc_ns, id"))
    labels = [line.split("\t") for line in open(labels_path) if line.startswith("alloc")]
    uncategorized = collections.Counter()
    for (ident, size, category), label in zip(rows, labels):
        if label[3] == "-":
            uncategorized[("library workspace " if ident in workspaces else "") + (category or "untagged")] += size
    return {"outside_pytorch": {}, "outside_pytorch_library_workspaces": 0,
            "uncategorized_by_pytorch": dict(uncategorized)}
