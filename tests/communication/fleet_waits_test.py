#!/usr/bin/env python3
"""`tbdprof fleet` over per-rank traces with unrelated clocks: the time each rank waited inside
collectives, from the kernels' durations alone, against the one-clock report's.

dp_train (samples/dp_train.cu) on 2 ranks, rank 1 slowed on the host before each step, recorded on one
host: one trace, one clock, whose report gives each rank's `wait_s` from the collectives' starts.
split_hosts.py makes one trace per rank, rank 1's clock 3.7 s ahead, and the fleet compares them. Its
waits assume that a collective ends at the same moment on every rank; where the ends differ by at most
S, a rank's wait per collective differs from the one-clock figure by at most 2 S (the shortest kernel's
rank may then have started up to S before the last one, and the rank's own end may be S off), so the
tolerance is 2 x the largest end spread of the window's collectives x the collectives matched. Also:
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


def largest_end_spread_ns(trace, window):
    """The most the k-th collective's end differs between the ranks (NCCL kernels starting in the
    report's window, matched by order): how far the fleet's assumption is off on this trace."""
    begin_ns, end_ns = round(window["begin_s"] * 1e9), round(window["end_s"] * 1e9)
    db = sqlite3.connect(trace)
    ends = {}
    for process, end in db.execute("SELECT process, end_ns FROM kernel_view WHERE lower(name) LIKE 'nccl%' "
                                   "AND start_ns >= ? AND start_ns < ? ORDER BY process, start_ns", (begin_ns, end_ns)):
        ends.setdefault(process, []).append(end)
    db.close()
    columns = list(zip(*ends.values()))
    return max(max(c) - min(c) for c in columns) if len(ends) == 2 and columns else None


def check_opt_in(tbdprof, trace):
    plain, asked = report(tbdprof, trace), json.loads(report(tbdprof, trace, "--collective-durations"))
    ranks = asked["communication"]["ranks"]
    check(len(ranks) == 2 and all(len(r.pop("collective_durations_ns")) == r["kernels"] for r in ranks),
          "--collective-durations: one duration per communication kernel of each rank")
    check(json.loads(plain) == asked, "--collective-durations adds its key and nothing else")
    check("collective_durations_ns" not in plain, "the default report has no durations")


def main():
    tbdprof, dp_train, work = sys.argv[1:4]
    if not have_dask():
        print("skipped: no Python here has Dask distributed (Debian: apt-get install python3-distributed)")
        sys.exit(77)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    trace = record(tbdprof, dp_train, work)
    check_opt_in(tbdprof, trace)
    whole = json.loads(report(tbdprof, trace))
    one_clock = whole["communication"]
    want = {r["rank"]: r["wait_s"] for r in one_clock["ranks"]}
    check(one_clock["waited_for_rank"] == 1 and want[0] > 0.5 * (ITERATIONS - 1) * SLOW_US * 1e-6,
          f"one clock: rank 0 waited {want[0]} s for rank {one_clock['waited_for_rank']} (the slow rank: 1)")
    parts = []
    for rank, skew_ns in ((0, 0), (1, 3_700_000_000)):
        parts.append(os.path.join(work, f"rank-{rank}.sqlite"))
        result = run([sys.executable, os.path.join(HERE, "split_hosts.py"), trace, parts[-1], "--ranks", str(rank),
                      "--skew-ns", str(skew_ns)] + (["--with-unranked"] if rank == 0 else []))
        if result.returncode != 0:
            sys.exit(f"split_hosts.py failed: {result.stderr}")
    result = run([tbdprof, "fleet", *parts, "--workers", "1", "--format", "json", "--quiet"])
    check(result.returncode == 0, f"fleet over the per-rank traces exits 0 ({result.returncode}: {result.stderr[-1500:]})")
    if result.returncode != 0:
        sys.exit(f"{len(FAILURES)} check(s) failed")
    fleet = json.loads(result.stdout)
    waits = fleet["waits"]
    spread_ns = largest_end_spread_ns(trace, whole["window"])
    check(waits["computed"] and spread_ns is not None, f"waits computed: {waits}; largest end spread {spread_ns} ns")
    if not waits["computed"] or spread_ns is None:
        sys.exit(f"{len(FAILURES)} check(s) failed")
    tolerance_s = 2 * spread_ns * waits["collectives"] * 1e-9
    for r in fleet["per_rank"]:
        check(abs(r["wait_s"] - want[r["rank"]]) <= tolerance_s,
              f"rank {r['rank']}: waited {r['wait_s'] * 1e3:.6f} ms by durations, {want[r['rank']] * 1e3:.6f} ms on one "
              f"clock (tolerance {tolerance_s * 1e3:.6f} ms: {waits['collectives']} collectives, ends within "
              f"{spread_ns} ns)")
    check(waits["waited_for_rank"] == one_clock["waited_for_rank"],
          f"the others waited for rank {waits['waited_for_rank']} (one clock: {one_clock['waited_for_rank']})")
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed")
    print("all checks passed")


if __name__ == "__main__":
    main()
