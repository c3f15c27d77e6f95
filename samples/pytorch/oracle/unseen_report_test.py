#!/usr/bin/env python3
"""The report's "Memory the framework cannot see" on a PyTorch run, against PyTorch's own word.

    unseen_report_test.py --python PY --tbdprof TBDPROF SAMPLE.py [sample options...]

Records SAMPLE under `tbdprof --sim` with torch.profiler's labels (oracle/export.py: PyTorch's
segments and its blocks, '-' where its memory profiler gives no category), reads the report's JSON
and checks it against the labels, never against fixed numbers:
  - the pool: the trace's allocations PyTorch's segments cover are the report's pool allocations
    (count and bytes);
  - outside the pool: the bytes of the other allocations (unseen.py's outside_pytorch, in total) and
    of those of them live at the report's peak moment equal the report's library, NCCL and other
    kinds together;
  - library workspaces handed out of the pool: the distinct (address, size) blocks PyTorch made but
    left uncategorized are the report's workspace ranges (count and bytes) - in these samples every
    such block is a cuBLAS/cuBLASLt workspace.
Exit 0 pass, 1 fail, 77 when PyTorch cannot run here.
"""

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

import unseen

SKIP = 77


def record(args, workdir):
    trace, labels = os.path.join(workdir, "run.sqlite"), os.path.join(workdir, "oracle.labels")
    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    command = [args.tbdprof, "record", "--sim", "--force", "-q", "-o", trace, "--", args.python, args.sample,
               "--oracle-labels", labels, "--device", "cuda"] + args.sample_args
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
        if "No module named 'torch'" in done.stderr or "PyTorch sees no CUDA device" in done.stderr:
            print("skipped: this PyTorch cannot run here")
            sys.exit(SKIP)
        raise SystemExit(f"FAIL: the run failed (exit {done.returncode}): {' '.join(command)}")
    return trace, labels


def report_json(tbdprof, trace):
    done = subprocess.run([tbdprof, "report", trace, "--format", "json", "-q"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"FAIL: tbdprof report failed: {done.stderr}")
    return json.loads(done.stdout)


def truth(trace, labels, peak_s):
    """Figures from the trace's allocations and PyTorch's labels alone."""
    ranges = unseen.pytorch_ranges(labels)
    segments = [(s, e) for s, e, _, _, kind in ranges if kind == "segment"]
    db = sqlite3.connect(f"file:{trace}?mode=ro", uri=True)
    peak_ns = round(peak_s * 1e9)
    pool = outside = outside_peak = pool_count = 0
    for address, size, alloc_ns, free_ns in db.execute(
            "SELECT address, bytes, alloc_ns, free_ns FROM allocations "
            "WHERE kind IN ('device', 'device_async', 'managed')"):
        if any(s <= address < e for s, e in segments):
            pool, pool_count = pool + size, pool_count + 1
            continue
        outside += size
        if alloc_ns <= peak_ns and (free_ns is None or free_ns > peak_ns) and free_ns != alloc_ns:
            outside_peak += size
    blocks = set()
    with open(labels) as lines:
        for line in lines:
            kind, address, size, category = line.rstrip("\n").split("\t")[:4]
            if kind == "alloc" and category == "-":
                blocks.add((int(address, 16), int(size)))
    return {"pool_allocations": pool_count, "pool_total_bytes": pool, "outside_total": outside,
            "outside_at_peak": outside_peak, "uncategorized_blocks": len(blocks),
            "uncategorized_bytes": sum(size for _, size in blocks)}


def compare(report, want):
    u = report["framework_unseen"]
    if u is None:
        return ["the report has no framework_unseen section for a PyTorch run"]
    items = {item["kind"]: item for item in u["items"]}
    outside = [items[k] for k in ("library_own", "nccl", "outside_pools")]
    got = {"pool_allocations": u["pool_allocations"], "pool_total_bytes": u["pool_total_bytes"],
           "outside_total": sum(i["total_bytes"] for i in outside),
           "outside_at_peak": sum(i["at_peak_bytes"] for i in outside),
           "uncategorized_blocks": items["library_workspace_in_pool"]["count"],
           "uncategorized_bytes": items["library_workspace_in_pool"]["total_bytes"]}
    failures = [f"{key}: report {got[key]}, truth {want[key]}" for key in want if got[key] != want[key]]
    if "PyTorch" not in u["allocator"]:
        failures.append(f"allocator: {u['allocator']!r} does not name PyTorch")
    if u["total_bytes"] != sum(i["total_bytes"] for i in u["items"]):
        failures.append("total_bytes is not the sum of the items")
    if want["outside_total"] == 0 or want["uncategorized_blocks"] == 0:
        failures.append("the run has nothing unseen to check (expected cuBLAS workspaces on both sides)")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True)
    parser.add_argument("--tbdprof", required=True)
    parser.add_argument("--workdir")
    parser.add_argument("sample")
    parser.add_argument("sample_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.workdir or scratch
        os.makedirs(workdir, exist_ok=True)
        trace, labels = record(args, workdir)
        report = report_json(args.tbdprof, trace)
        want = truth(trace, labels, report["memory"]["peak_s"])
        failures = compare(report, want)
    print("truth:", json.dumps(want))
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
