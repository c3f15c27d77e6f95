#!/usr/bin/env python3
"""The communication figures of the real DDP trace of Holistic Trace Analysis' test data
(df_index_resolver.json.gz: rank 1 of 2, NCCL all-reduce kernels) against the same figures worked
out here, independently, from the Kineto JSON: per ProfilerStep of the report's window.
usage: hta_trace_test.py TBDPROF VALIDATION_DATA WORKDIR   (exit 77 when the data is absent)"""
import gzip, json, os, shutil, subprocess, sys

tbdprof, data, work = sys.argv[1:4]
source = os.path.join(data, "hta", "df_index_resolver.json.gz")
if not os.path.isfile(source):
    print(f"skipped: {source} is absent (the shared validation data)")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
trace = os.path.join(work, "ddp.sqlite")
subprocess.run([tbdprof, "import", source, "-o", trace, "--quiet"], check=True)
report = json.loads(subprocess.run([tbdprof, "report", trace, "--format", "json", "--quiet"], check=True,
                                   capture_output=True, text=True).stdout)


def union(intervals):
    merged = []
    for b, e in sorted(intervals):
        if merged and b <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([b, e])
    return merged


def clip(u, lo, hi):
    return [(max(b, lo), min(e, hi)) for b, e in u if min(e, hi) > max(b, lo)]


def length(u):
    return sum(e - b for b, e in u)


def shared(u, v):
    total = 0
    for b, e in u:  # small lists: quadratic is fine
        for c, d in v:
            total += max(0, min(e, d) - max(b, c))
    return total


with gzip.open(source, "rt") as f:
    events = json.load(f)["traceEvents"]
# Kineto's microseconds with three decimals as integer nanoseconds, as the import reads them.
ns = lambda us: round(us * 1000)
kernels = [e for e in events if e.get("cat") == "kernel" and e.get("ph") == "X"]
comm = union((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in kernels if e["name"].lower().startswith("nccl"))
comp = union((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in kernels if not e["name"].lower().startswith("nccl"))
steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events
               if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))

c = report["communication"]
failures = []
if not c["present"] or len(c["ranks"]) != 1:
    sys.exit(f"expected one rank with communication, got {c['present']} / {len(c['ranks'])}")
rank = c["ranks"][0]
if rank["rank"] != 1 or c["world_size"] != 2:
    failures.append(f"rank {rank['rank']} of {c['world_size']}, the trace says 1 of 2")
# The report's iterations are the ProfilerSteps of the window: the steady window drops the first.
iterations = rank["iterations"]
window_steps = steps[len(steps) - len(iterations):]
print(f"{len(iterations)} iterations in the window of {len(steps)} ProfilerSteps")
totals = {"time_s": 0, "overlapped_s": 0, "computation_s": 0, "kernels": 0}
for k, (lo, hi) in enumerate(window_steps):
    cc, pp = clip(comm, lo, hi), clip(comp, lo, hi)
    want = {"time_s": length(cc), "overlapped_s": shared(cc, pp), "computation_s": length(pp)}
    want["exposed_s"] = want["time_s"] - want["overlapped_s"]
    got = iterations[k]
    for key, value in want.items():
        if abs(got[key] * 1e9 - value) > 2:  # nanoseconds: the import's rounding of microseconds
            failures.append(f"step {k}: {key} {got[key] * 1e9:.0f} ns, from the JSON {value} ns")
    print(f"step {k}: communication {want['time_s'] / 1e3:.1f} us, overlapped {want['overlapped_s'] / want['time_s']:.4f}"
          f" (report {got['overlap_fraction']:.4f})")
if failures:
    print("\n".join(failures))
    sys.exit(1)
print("communication figures of the real DDP trace agree with the JSON, step by step")
