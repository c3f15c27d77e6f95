#!/usr/bin/env python3
"""`tbdprof fleet` over per-rank traces with unrelated clocks: the time each rank waited inside
collectives, from the kernels' durations alone, against the one-clock report's.

dp_train (samples/dp_train.cu) on 2 ranks, rank 1 slowed on the host before each step, recorded on one
host: one trace, one clock. split_hosts.py makes one trace per rank, rank 1's clock 3.7 s ahead, and
the fleet compares them. The truth comes from the one-clock trace: for the collectives each rank's own
trace window holds, a rank waited from its start to the last rank's start (at most its kernel's
length), as the one-trace report defines it (its own window, the trace's, can cut a wait at its start
and then reports none: rank 0 may enter the first steady collective before rank 1's step begins).
The fleet's waits assume that a collective ends at the same moment on every rank; where the ends
differ by at most S, a rank's wait per collective differs from the truth by at most 2 S (the shortest
kernel's rank may then have started up to S before the last one, and the rank's own end may be S
off), so the tolerance is 2 x the largest end spread x the collectives matched. Also:
`--collective-durations` adds its key and changes nothing else in the report.

usage: fleet_waits_test.py TBDPROF DP_TRAIN WORK_DIR   (exit 77 when no Python here has Dask distributed)"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ITERATIONS, SLOW_US = 5, 20_000
FAILURES = []


def check(ok, message):
    print(("ok   " if ok else "FAIL ") + message)
    if not ok:
        FAILURES.append(message)


def run(command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


def have_dask():
    return any(p and run([p, "-c", "import distributed"]).returncode == 0
               for p in (sys.executable, "/usr/bin/python3", shutil.which("python3")))


def record(tbdprof, dp_train, work):
    trace = os.path.join(work, "all.sqlite")
    result = run([tbdprof, "--sim", "--force", "-o", trace, "--", dp_train, "--ranks", "2", "--iterations",
                  str(ITERATIONS), "--layers", "4", "--hidden", "128", "--buckets", "2", "--slow-rank", "1",
                  "--slow-us", str(SLOW_US)], env=dict(os.environ, TBDSIM_DEVICE_COUNT="2"))
    if result.returncode != 0:
        sys.exit(f"recording dp_train failed ({result.returncode}): {result.stderr[-2000:]}")
    return trace


def report(tbdprof, trace, *extra):
    result = run([tbdprof, "report", trace, "--format", "json", "--quiet", *extra])
    if result.returncode != 0:
        sys.exit(f"tbdprof report {trace} failed: {result.stderr}")
    return result.stdout


def one_clock_waits(trace, windows):
    """Ground truth from the one-clock trace for the collectives the fleet matched: each rank's NCCL
    kernels starting in its own trace's window (mapped back to the one clock), matched by order; per
    collective, a rank waited from its start to the last rank's start, at most its kernel's length
    (docs/analyzer.md, "Waited in collectives"). Also the largest spread of the collectives' ends: how
    far the fleet's assumption (they end together) is off on this trace."""
    db = sqlite3.connect(trace)
    kernels = {}
    for rank, (begin_ns, end_ns) in windows.items():
        kernels[rank] = db.execute(
            "SELECT k.start_ns, k.end_ns FROM kernel_view k JOIN process_ranks p ON p.process = k.process "
            "WHERE p.rank = ? AND lower(k.name) LIKE 'nccl%' AND k.start_ns >= ? AND k.start_ns < ? "
            "ORDER BY k.start_ns", (rank, begin_ns, end_ns)).fetchall()
    db.close()
    if len({len(k) for k in kernels.values()}) != 1:
        sys.exit(f"the per-rank windows hold {[len(k) for k in kernels.values()]} collectives: nothing to compare")
    waits, spread_ns = {rank: 0 for rank in kernels}, 0
    for column in zip(*kernels.values()):
        latest = max(start for start, _ in column)
        spread_ns = max(spread_ns, max(end for _, end in column) - min(end for _, end in column))
        for rank, (start, end) in zip(kernels, column):
            waits[rank] += min(max(latest - start, 0), end - start)
    return {rank: w * 1e-9 for rank, w in waits.items()}, spread_ns


def check_opt_in(tbdprof, trace):
    plain, asked = report(tbdprof, trace), json.loads(report(tbdprof, trace, "--collective-durations"))
    ranks = asked["communication"]["ranks"]
    check(len(ranks) == 2 and all(len(r.pop("collective_durations_ns")) == r["kernels"] for r in ranks),
          "--collective-durations: one duration per communication kernel of each rank")
    check(json.loads(plain) == asked, "--collective-durations adds its key and nothing else")
    check("collective_durations_ns" not in plain, "the default report has no durations")


SKEWS_NS = {0: 0, 1: 3_700_000_000}  # rank 1's trace on a clock 3.7 s ahead


def split(trace, work):
    parts = {}
    for rank, skew_ns in SKEWS_NS.items():
        parts[rank] = os.path.join(work, f"rank-{rank}.sqlite")
        result = run([sys.executable, os.path.join(HERE, "split_hosts.py"), trace, parts[rank], "--ranks", str(rank),
                      "--skew-ns", str(skew_ns)] + (["--with-unranked"] if rank == 0 else []))
        if result.returncode != 0:
            sys.exit(f"split_hosts.py failed: {result.stderr}")
    return parts


def own_windows(tbdprof, parts):
    """Each rank trace's window (what its report, and so the fleet, reads), on the one clock."""
    windows = {}
    for rank, part in parts.items():
        w = json.loads(report(tbdprof, part))["window"]
        windows[rank] = (round(w["begin_s"] * 1e9) - SKEWS_NS[rank], round(w["end_s"] * 1e9) - SKEWS_NS[rank])
    return windows


def check_fleet(tbdprof, trace, parts, one_clock):
    result = run([tbdprof, "fleet", *parts.values(), "--workers", "1", "--format", "json", "--quiet"])
    check(result.returncode == 0, f"fleet over the per-rank traces exits 0 ({result.returncode}: {result.stderr[-1500:]})")
    if result.returncode != 0:
        return
    fleet = json.loads(result.stdout)
    waits = fleet["waits"]
    check(waits["computed"], f"waits computed: {waits}")
    if not waits["computed"]:
        return
    want, spread_ns = one_clock_waits(trace, own_windows(tbdprof, parts))
    tolerance_s = 2 * spread_ns * waits["collectives"] * 1e-9
    for r in fleet["per_rank"]:
        check(abs(r["wait_s"] - want[r["rank"]]) <= tolerance_s,
              f"rank {r['rank']}: waited {r['wait_s'] * 1e3:.6f} ms by durations, {want[r['rank']] * 1e3:.6f} ms on one "
              f"clock (tolerance {tolerance_s * 1e3:.6f} ms: {waits['collectives']} collectives, ends within "
              f"{spread_ns} ns)")
        if one_clock["ranks"][0]["wait_s"] is not None:  # the one-clock report's window may cut a wait apart
            mine = next(x["wait_s"] for x in one_clock["ranks"] if x["rank"] == r["rank"])
            print(f"     the one-clock report's own window: rank {r['rank']} waited {mine * 1e3:.6f} ms")
    check(waits["waited_for_rank"] == 1, f"the others waited for rank {waits['waited_for_rank']} (the slow rank: 1)")


def main():
    tbdprof, dp_train, work = sys.argv[1:4]
    if not have_dask():
        print("skipped: no Python here has Dask distributed (Debian: apt-get install python3-distributed)")
        sys.exit(77)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    trace = record(tbdprof, dp_train, work)
    check_opt_in(tbdprof, trace)
    one_clock = json.loads(report(tbdprof, trace))["communication"]
    check_fleet(tbdprof, trace, split(trace, work), one_clock)
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed")
    print("all checks passed")


if __name__ == "__main__":
    main()
