#!/usr/bin/env python3
"""The one-trace report's waits in collectives against the simulated NCCL's ground truth (TBDSIM_TRUTH),
for traces holding every rank of a job: collectives matched by communicator and launch number, as
`tbdprof fleet` matches them (docs/analyzer.md, "Waited in collectives").

dp_train (samples/dp_train.cu) recorded with all its ranks into one trace, rank 1 slowed on the host:
  - 4 ranks, --subgroups 2: the world communicator and two subgroups {0, 1}, {2, 3} issuing the same
    calls. Every rank runs as many collectives, so matching by order paired rank 0's subgroup
    collective with rank 2's (unrelated);
  - 4 ranks, --subgroup-ranks 2: ranks 0 and 1 run more collectives than ranks 2 and 3 (by order:
    nothing computed);
  - 2 ranks, one communicator (by order and by identity alike);
  - the first trace without its NCCL calls (as an imported trace: no identity): matched by order;
  - the first trace through `tbdprof fleet` (when a Python here has Dask distributed): the fleet's
    matcher (Python, per-rank traces, from durations) and the report's (C++) agree on it.
Truth, from the TBDSIM_TRUTH file alone: the `nccl` lines of each process in order, per communicator
(the simulated library names it by its segment), are its collectives, each with its kernel (the
process's NCCL kernels in launch order); a collective counts when every member's kernel starts inside
the report's window (the truth's clock is the trace's plus one offset, found from the kernels), and a
rank waited from its kernel's start to the last member's arrival (when the simulated collective can
begin), at most its kernel's length. The report sees kernel starts only, and the last member's kernel
may start after its arrival (launched after its stream was ready): each rank's wait must be within the
sum of those gaps over the collectives matched. Also the collectives matched, the communicators and
the collectives left out (in some members' windows only), the rank waited for and the text line.

usage: one_trace_waits_test.py TBDPROF DP_TRAIN WORK_DIR [SCHEMA]"""
import json
import os
import shutil
import sqlite3
import sys

from checks import check, exit_if_failed, run

ITERATIONS, SLOW_US = 5, 20_000
IDENTITY = "communicator and launch number"


def record(tbdprof, dp_train, work, name, ranks, *options):
    trace, truth = os.path.join(work, name + ".sqlite"), os.path.join(work, name + ".truth.tsv")
    env = dict(os.environ, TBDSIM_TRUTH=truth, TBDSIM_DEVICE_COUNT=str(ranks))
    result = run([tbdprof, "--sim", "--force", "-o", trace, "--", dp_train, "--ranks", str(ranks), "--iterations",
                  str(ITERATIONS), "--layers", "4", "--hidden", "128", "--buckets", "2", "--slow-rank", "1",
                  "--slow-us", str(SLOW_US), *options], env=env)
    if result.returncode != 0:
        sys.exit(f"recording dp_train {name} failed ({result.returncode}): {result.stderr[-2000:]}")
    return trace, truth


def report(tbdprof, trace, *extra):
    result = run([tbdprof, "report", trace, "--quiet", *extra])
    if result.returncode != 0:
        sys.exit(f"tbdprof report {trace} failed: {result.stderr}")
    return result.stdout


def read_truth(path):
    """Per process id: its `nccl` lines in order (communicator, arrival) and its NCCL kernels
    (start, end) in launch order; and each process's rank on the world communicator (the largest)."""
    lines, kernels, rank_of, size_of = {}, {}, {}, {}
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "nccl":
                lines.setdefault(int(fields[1]), []).append((fields[2], int(fields[11])))
            elif fields[0] == "kernel" and fields[11].startswith("nccl"):
                kernels.setdefault(int(fields[1]), []).append((int(fields[2]), int(fields[4]), int(fields[5])))
            elif fields[0] == "nccl_comm":
                pid, nranks = int(fields[1]), int(fields[4])
                if nranks > size_of.get(pid, 0):
                    size_of[pid], rank_of[pid] = nranks, int(fields[3])
    for pid in kernels:
        kernels[pid] = [(start, end) for _, start, end in sorted(kernels[pid])]
    return lines, kernels, rank_of


def clock_offset_ns(trace, kernels):
    """Truth time minus trace time: one value for every NCCL kernel of every process."""
    db = sqlite3.connect(trace)
    pid_of = dict(db.execute("SELECT id, pid FROM processes"))
    offsets = set()
    for process, pid in pid_of.items():
        starts = sorted(s for (s,) in db.execute(
            "SELECT start_ns FROM kernel_view WHERE process = ? AND lower(name) LIKE 'nccl%'", (process,)))
        offsets |= {t[0] - s for t, s in zip(sorted(kernels.get(pid, [])), starts)}
    db.close()
    if len(offsets) != 1:
        sys.exit(f"{trace}: the truth's NCCL kernels are not the trace's shifted by one offset: {sorted(offsets)[:4]}")
    return offsets.pop()


def true_waits(trace, truth, window_ns):
    """Each rank's wait over the collectives every member started inside the window, the number of
    those, of the communicators with one, and of the collectives some members started in it, others not."""
    lines, kernels, rank_of = read_truth(truth)
    offset = clock_offset_ns(trace, kernels)
    collectives = {}  # (communicator, number on it) -> [(rank, arrival, kernel start, kernel end)]
    for pid, own in lines.items():
        if len(own) != len(kernels[pid]):
            sys.exit(f"truth: process {pid} has {len(own)} nccl lines and {len(kernels[pid])} NCCL kernels")
        count = {}
        for (communicator, arrival), (start, end) in zip(own, kernels[pid]):
            number = count.get(communicator, 0)
            count[communicator] = number + 1
            collectives.setdefault((communicator, number), []).append((rank_of[pid], arrival, start - offset, end - offset))
    waits = {rank: 0 for rank in rank_of.values()}
    matched, communicators, partial, tolerance_ns = 0, set(), 0, 0
    for (communicator, _), members in collectives.items():
        inside = [window_ns[0] <= start < window_ns[1] for _, _, start, _ in members]
        if not all(inside):
            partial += any(inside)
            continue
        matched += 1
        communicators.add(communicator)
        last = max(arrival for _, arrival, _, _ in members)
        for rank, _, start, end in members:
            waits[rank] += min(max(last - offset - start, 0), end - start)
        # The report sees kernel starts only: the last member's start may follow its arrival.
        tolerance_ns += abs(max(start for _, _, start, _ in members) - (last - offset))
    return waits, matched, len(communicators), partial, tolerance_ns


def check_scenario(tbdprof, trace, truth, name, communicators):
    got = json.loads(report(tbdprof, trace, "--format", "json"))
    comm, w = got["communication"], got["window"]
    want, matched, want_communicators, partial, tolerance_ns = true_waits(trace, truth, (round(w["begin_s"] * 1e9),
                                                                           round(w["end_s"] * 1e9)))
    waits = comm.get("waits") or {}
    check(waits.get("matched_by") == IDENTITY and waits.get("collectives") == matched
          and waits.get("communicators") == want_communicators == communicators,
          f"{name}: {matched} collectives on {want_communicators} communicators matched by identity: {waits}")
    left = sum(n for why, n in (waits.get("left_out") or {}).items() if "window" in why)
    check(left == partial, f"{name}: {partial} collectives left out as in some members' windows only: {waits}")
    for r in comm["ranks"]:
        wait_ns = None if r["wait_s"] is None else round(r["wait_s"] * 1e9)
        check(wait_ns is not None and abs(wait_ns - want[r["rank"]]) <= tolerance_ns,
              f"{name}: rank {r['rank']} waited {wait_ns} ns, truth {want[r['rank']]} ns (tolerance {tolerance_ns} ns)")
    check(comm["waited_for_rank"] == 1, f"{name}: the others waited for rank {comm['waited_for_rank']} (slow: 1)")
    text = report(tbdprof, trace)
    check(f"matched by {IDENTITY}" in text, f"{name}: the text report says how collectives were matched")
    return got, tolerance_ns


def check_fleet_agrees(tbdprof, trace, got, tolerance_ns):
    """`tbdprof fleet` over the same one trace (its ranks compared by its own matcher, from durations)
    matches the same collectives and leaves out as many; the waits agree within the truth's tolerance
    (the collectives end together on one clock). Skipped without Dask distributed."""
    import fleet_waits_test
    if not fleet_waits_test.have_dask():
        print("     (no Python here has Dask distributed: the fleet's matching is not compared)")
        return
    result = run([tbdprof, "fleet", trace, "--workers", "1", "--format", "json", "--quiet"])
    check(result.returncode == 0, f"fleet over the one trace exits 0 ({result.returncode}: {result.stderr[-1500:]})")
    if result.returncode != 0:
        return
    fleet, ours = json.loads(result.stdout), got["communication"]["waits"]
    same = [fleet["waits"][key] == ours[key] for key in ("matched_by", "collectives", "communicators")]
    check(all(same) and sum(fleet["waits"]["left_out"].values()) == sum(ours["left_out"].values()),
          f"the fleet matches as the report: {fleet['waits']} / {ours}")
    report_waits = {r["rank"]: r["wait_s"] for r in got["communication"]["ranks"]}
    for r in fleet["per_rank"]:
        check(r["wait_s"] is not None and abs(r["wait_s"] - report_waits[r["rank"]]) * 1e9 <= tolerance_ns,
              f"rank {r['rank']}: the fleet's wait {(r['wait_s'] or 0) * 1e3:.6f} ms, the report's "
              f"{report_waits[r['rank']] * 1e3:.6f} ms")


def check_without_calls(tbdprof, trace, work):
    """The trace without its NCCL calls (no identity, as an imported trace): matched by order."""
    bare = os.path.join(work, "without_calls.sqlite")
    shutil.copyfile(trace, bare)
    db = sqlite3.connect(bare)
    db.execute("DELETE FROM nccl_calls")
    db.commit()
    db.close()
    comm = json.loads(report(tbdprof, bare, "--format", "json"))["communication"]
    waits = comm.get("waits") or {}
    check(waits.get("matched_by") == "order", f"without NCCL calls: matched by order: {waits}")
    check("matched by order" in report(tbdprof, bare), "without NCCL calls: the text report says by order")


def validate(schema_path, document):
    try:
        import jsonschema
    except ImportError:
        print("     (jsonschema not installed: the schema is not checked)")
        return
    with open(schema_path) as f:
        jsonschema.validate(document, json.load(f))
    print("ok   the report validates against the schema")


def main():
    tbdprof, dp_train, work = sys.argv[1:4]
    schema = sys.argv[4] if len(sys.argv) > 4 else None
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    trace, truth = record(tbdprof, dp_train, work, "subgroups", 4, "--subgroups", "2")
    document, tolerance_ns = check_scenario(tbdprof, trace, truth, "--subgroups 2", 3)
    if schema:
        validate(schema, document)
    check_fleet_agrees(tbdprof, trace, document, tolerance_ns)
    check_without_calls(tbdprof, trace, work)
    check_scenario(tbdprof, *record(tbdprof, dp_train, work, "subgroup_ranks", 4, "--subgroup-ranks", "2"),
                   "--subgroup-ranks 2", 2)
    check_scenario(tbdprof, *record(tbdprof, dp_train, work, "two_ranks", 2), "2 ranks", 1)
    exit_if_failed()
    print("all checks passed")


if __name__ == "__main__":
    main()
