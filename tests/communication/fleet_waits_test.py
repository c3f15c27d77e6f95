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
off), so the tolerance is 2 x the largest end spread x the collectives matched. The fleet matches
collectives by identity (communicator, launch number on it since the trace began), so the same
traces with rank 1's window one collective later at both ends (equal counts: matching by order paired
each collective with the next) give the truth over the collectives both windows hold, the two others
left out. Also: `--collective-durations` adds its keys (durations, identities) and changes nothing
else in the report.

usage: fleet_waits_test.py TBDPROF DP_TRAIN WORK_DIR   (exit 77 when no Python here has Dask distributed)"""
import json
import os
import shutil
import sqlite3
import sys

from checks import check, exit_if_failed, run

HERE = os.path.dirname(os.path.abspath(__file__))
ITERATIONS, SLOW_US = 5, 20_000


def have_dask():
    return any(p and run([p, "-c", "import distributed"]).returncode == 0
               for p in (sys.executable, "/usr/bin/python3", shutil.which("python3")))


def record(tbdprof, dp_train, work, ranks=2, *extra):
    trace = os.path.join(work, "all.sqlite")
    result = run([tbdprof, "--sim", "--force", "-o", trace, "--", dp_train, "--ranks", str(ranks), "--iterations",
                  str(ITERATIONS), "--layers", "4", "--hidden", "128", "--buckets", "2", "--slow-rank", "1",
                  "--slow-us", str(SLOW_US), *extra], env=dict(os.environ, TBDSIM_DEVICE_COUNT=str(ranks)))
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
    kernels on each communicator (told apart by the identity the collector recorded at its creation,
    else by its size: the communicators of the tests without identities differ in it),
    numbered in start order over the whole run (each communicator's kernels run on one stream, in the
    order NCCL has every rank issue them); a collective counts when every rank of its communicator
    started it inside that rank's own trace window (mapped back to the one clock). Per collective, a
    rank waited from its start to the last rank's start, at most its kernel's length (docs/analyzer.md,
    "Waited in collectives"). Also the largest spread of the collectives' ends, per communicator: how
    far the fleet's assumption (they end together) is off on this trace, and how many were matched."""
    db = sqlite3.connect(trace)
    runs = {}  # (communicator, rank) -> [(start, end)] over the whole run
    recorded = any(c[1] == "communicator_identity" for c in db.execute("PRAGMA table_info(nccl_calls)"))
    identity = "n.communicator_identity" if recorded else "NULL"
    for rank, nranks, ident, start, end in db.execute(
            f"SELECT p.rank, n.nranks, {identity}, k.start_ns, k.end_ns FROM kernel_view k "
            "JOIN process_ranks p ON p.process = k.process "
            "JOIN nccl_calls n ON n.library_call = k.library_call WHERE lower(k.name) LIKE 'nccl%' "
            "ORDER BY p.rank, n.nranks, k.start_ns"):
        runs.setdefault((nranks if ident is None else ident, rank), []).append((start, end))
    db.close()
    waits, spread_ns, matched = {rank: 0 for rank in windows}, {}, {}
    for nranks in sorted({n for n, _ in runs}):
        members = sorted(rank for n, rank in runs if n == nranks)
        spread_ns[nranks], matched[nranks] = 0, 0
        for index in range(min(len(runs[(nranks, rank)]) for rank in members)):
            column = [runs[(nranks, rank)][index] for rank in members]
            if not all(windows[rank][0] <= start < windows[rank][1] for rank, (start, _) in zip(members, column)):
                continue
            matched[nranks] += 1
            latest = max(start for start, _ in column)
            spread_ns[nranks] = max(spread_ns[nranks], max(end for _, end in column) - min(end for _, end in column))
            for rank, (start, end) in zip(members, column):
                waits[rank] += min(max(latest - start, 0), end - start)
    return {rank: w * 1e-9 for rank, w in waits.items()}, spread_ns, matched


def tolerance_s(spread_ns, matched):
    """Per communicator, 2 x the largest end spread per collective matched (see the module's text)."""
    return sum(2 * spread_ns[n] * matched[n] for n in matched) * 1e-9


IDENTITY_KEYS = ("collective_durations_ns", "collective_communicators", "collective_sequences", "communicators")


def check_opt_in(tbdprof, trace):
    plain, asked = report(tbdprof, trace), json.loads(report(tbdprof, trace, "--collective-durations"))
    ranks = asked["communication"]["ranks"]
    check(len(ranks) == 2 and all(len(r["collective_durations_ns"]) == r["kernels"] for r in ranks),
          "--collective-durations: one duration per communication kernel of each rank")
    # Each kernel named by its communicator (one here, of 2 ranks, rank 0 and 1 on it) and its launch
    # number on it since the trace began: the window skips the first step's, so numbers begin later.
    check(all(key in r for r in ranks for key in IDENTITY_KEYS), "--collective-durations: the identities too")
    if not all(key in r for r in ranks for key in IDENTITY_KEYS):
        return
    for r in ranks:
        sequences = r["collective_sequences"]
        check(r["collective_communicators"] == [0] * r["kernels"] and len(r["communicators"]) == 1
              and r["communicators"][0]["nranks"] == 2 and r["communicators"][0]["rank"] == r["rank"]
              and sequences == list(range(sequences[0], sequences[0] + r["kernels"])) and sequences[0] > 0,
              f"rank {r['rank']}: collectives numbered on their communicator ({sequences}, {r['communicators']})")
    check(ranks[0]["communicators"][0]["key"] == ranks[1]["communicators"][0]["key"], "one key for the communicator")
    for r in ranks:
        for key in IDENTITY_KEYS:
            r.pop(key)
    check(json.loads(plain) == asked, "--collective-durations adds its keys and nothing else")
    check("collective_durations_ns" not in plain, "the default report has no durations")


SKEWS_NS = {0: 0, 1: 3_700_000_000}  # rank 1's trace on a clock 3.7 s ahead


def split(trace, work, skews_ns=SKEWS_NS):
    parts = {}
    for rank, skew_ns in skews_ns.items():
        parts[rank] = os.path.join(work, f"rank-{rank}.sqlite")
        result = run([sys.executable, os.path.join(HERE, "split_hosts.py"), trace, parts[rank], "--ranks", str(rank),
                      "--skew-ns", str(skew_ns)] + (["--with-unranked"] if rank == 0 else []))
        if result.returncode != 0:
            sys.exit(f"split_hosts.py failed: {result.stderr}")
    return parts


def own_windows(tbdprof, parts, skews_ns=SKEWS_NS):
    """Each rank trace's window (what its report, and so the fleet, reads), on the one clock."""
    windows = {}
    for rank, part in parts.items():
        w = json.loads(report(tbdprof, part))["window"]
        windows[rank] = (round(w["begin_s"] * 1e9) - skews_ns[rank], round(w["end_s"] * 1e9) - skews_ns[rank])
    return windows


def fleet_waits(tbdprof, trace, parts, skews_ns=None):
    """`tbdprof fleet` over the parts, each rank's wait checked against the one-clock truth over the
    collectives every rank of their communicator has in its window. The fleet's result, None when
    it failed or computed no waits."""
    result = run([tbdprof, "fleet", *parts.values(), "--workers", "1", "--format", "json", "--quiet"])
    check(result.returncode == 0, f"fleet over the per-rank traces exits 0 ({result.returncode}: {result.stderr[-1500:]})")
    if result.returncode != 0:
        return None
    fleet = json.loads(result.stdout)
    waits = fleet["waits"]
    check(waits["computed"], f"waits computed: {waits}")
    if not waits["computed"]:
        return None
    want, spread_ns, matched = one_clock_waits(trace, own_windows(tbdprof, parts, skews_ns or SKEWS_NS))
    tolerance = tolerance_s(spread_ns, matched)
    check(waits["collectives"] == sum(matched.values()), f"{waits['collectives']} collectives matched, "
          f"{matched} (per communicator: identity, else size) in every member's window")
    for r in fleet["per_rank"]:
        check(r["wait_s"] is not None and abs(r["wait_s"] - want[r["rank"]]) <= tolerance,
              f"rank {r['rank']}: waited {(r['wait_s'] or 0) * 1e3:.6f} ms by durations, {want[r['rank']] * 1e3:.6f} ms "
              f"on one clock (tolerance {tolerance * 1e3:.6f} ms: {matched} collectives, ends within {spread_ns} ns)")
    return fleet


def check_fleet(tbdprof, trace, parts, one_clock):
    fleet = fleet_waits(tbdprof, trace, parts)
    if fleet is None:
        return
    if one_clock["ranks"][0]["wait_s"] is not None:  # the one-clock report's window may cut a wait apart
        for x in one_clock["ranks"]:
            print(f"     the one-clock report's own window: rank {x['rank']} waited {x['wait_s'] * 1e3:.6f} ms")
    waits = fleet["waits"]
    check(waits.get("matched_by") == "communicator and launch number" and waits.get("communicators") == 1,
          f"matched by identity on one communicator: {waits}")
    check(waits["waited_for_rank"] == 1, f"the others waited for rank {waits['waited_for_rank']} (the slow rank: 1)")


def nccl_starts(part):
    """A rank trace's NCCL kernel starts, in order (on its own clock)."""
    db = sqlite3.connect(part)
    starts = [s for (s,) in db.execute("SELECT start_ns FROM kernel_view WHERE lower(name) LIKE 'nccl%' ORDER BY start_ns")]
    db.close()
    return starts


def shift_window(part, window, later):
    """Moves the steady window of a rank trace by one collective through its iterations: `later`, its
    second iteration begins just after its first collective in the window started (one fewer at the
    start); else its last iteration ends just before its last collective starts (one fewer at the end).
    What a rank's own step detection does when it puts a boundary elsewhere than another rank's."""
    inside = [s for s in nccl_starts(part) if window[0] <= s < window[1]]
    db = sqlite3.connect(part)
    spans = db.execute("SELECT id FROM iterations WHERE coalesce(kind, 'training') = 'training' "
                       "AND process IN (SELECT process FROM process_ranks) ORDER BY begin_ns").fetchall()
    if later:
        db.execute("UPDATE iterations SET begin_ns = ? WHERE id = ?", (inside[0] + 1, spans[1][0]))
    else:
        db.execute("UPDATE iterations SET end_ns = ?, device_end_ns = min(coalesce(device_end_ns, ?), ?) WHERE id = ?",
                   (inside[-1] - 1, inside[-1] - 1, inside[-1] - 1, spans[-1][0]))
    db.commit()
    db.close()


def check_shifted(tbdprof, trace, parts, work):
    """Rank 1's window one collective later at both ends than rank 0's (rank 0 losing its last, rank 1
    its first): equal counts, so matching by order would pair each collective with the next one."""
    shifted = {}
    for rank, part in parts.items():
        shifted[rank] = os.path.join(work, f"shifted-{rank}.sqlite")
        shutil.copyfile(part, shifted[rank])
    windows = own_windows(tbdprof, parts)
    shift_window(shifted[0], tuple(t + SKEWS_NS[0] for t in windows[0]), later=False)
    shift_window(shifted[1], tuple(t + SKEWS_NS[1] for t in windows[1]), later=True)
    counts = {rank: json.loads(report(tbdprof, part))["communication"]["kernels"] for rank, part in shifted.items()}
    check(counts[0] == counts[1], f"shifted windows hold equal numbers of collectives: {counts}")
    fleet = fleet_waits(tbdprof, trace, shifted)
    if fleet is not None:
        left = fleet["waits"].get("left_out") or {}
        check(sum(n for why, n in left.items() if "window" in why) == 2,
              f"two collectives left out, each in one rank's window only: {left}")





def start(work):
    """Skips (exit 77) without Dask distributed; else an empty WORK folder."""
    if not have_dask():
        print("skipped: no Python here has Dask distributed (Debian: apt-get install python3-distributed)")
        sys.exit(77)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)


def fleet_of_split_run(tbdprof, dp_train, work, ranks, skews_ns, *sample_options):
    """dp_train on RANKS ranks recorded on one host, split into one trace per rank on the clocks of
    SKEWS_NS, and the fleet's output over them (None when it failed, the failure recorded)."""
    start(work)
    trace = record(tbdprof, dp_train, work, ranks, *sample_options)
    parts = split(trace, work, skews_ns)
    return fleet_waits(tbdprof, trace, parts, skews_ns)


def finish():
    exit_if_failed()
    print("all checks passed")


def main():
    tbdprof, dp_train, work = sys.argv[1:4]
    start(work)
    trace = record(tbdprof, dp_train, work)
    check_opt_in(tbdprof, trace)
    one_clock = json.loads(report(tbdprof, trace))["communication"]
    parts = split(trace, work)
    check_fleet(tbdprof, trace, parts, one_clock)
    check_shifted(tbdprof, trace, parts, work)
    finish()


if __name__ == "__main__":
    main()
