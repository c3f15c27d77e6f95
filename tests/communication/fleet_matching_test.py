#!/usr/bin/env python3
"""tbdprof-fleet's matching of collectives across rank traces, on summaries built by hand (no Dask,
no trace): the functions the workers run (shortest_by_id, rank_waits, tally) are called in place of
the cluster. Each case's waits are known by construction: each rank's kernel durations are given,
and a rank's wait in a collective is its duration minus the shortest over its communicator's ranks.

Cases: windows shifted by one collective at both ends (equal counts); two communicators, one of a
subgroup; two subgroups that look alike (same size, same calls: not told apart, left out); a
communicator some of whose ranks are not among the traces (left out); kernels without an NCCL call
record (left out, counted); reports without identities (matched by order, as before).

usage: fleet_matching_test.py FLEET   (fleet/tbdprof-fleet)"""
import importlib.machinery
import importlib.util
import sys

from checks import check, exit_if_failed



def load(path):
    loader = importlib.machinery.SourceFileLoader("tbdprof_fleet", path)
    spec = importlib.util.spec_from_loader("tbdprof_fleet", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class InPlace:
    """The IdentityMatcher's two questions answered without a cluster."""

    def __init__(self, fleet, full):
        self.fleet, self.full = fleet, full

    def floor_ns(self):
        return sum(self.fleet.shortest(*self.full) or [])

    def by_identity(self, complete, excluded):
        reduced = self.fleet.shortest_by_id(*self.full)
        waits = [self.fleet.rank_waits(s, reduced, complete) for s in self.full]
        return {w["path"]: w["ranks"] for w in waits if w["ranks"]}, self.fleet.tally(reduced, complete, excluded)


def rank(number, communicators, collectives):
    """A rank of a report: communicators [(key, nranks, its rank on it)], collectives [(index into
    communicators or None, launch number or None, duration_ns)]."""
    return {"rank": number, "process": 100 + number, "device": 0, "computation_s": 1.0, "communication_s": 0.1,
            "overlapped_s": 0.0, "exposed_s": 0.1, "idle_s": 0.0, "kernels": len(collectives), "peak_bytes": 0,
            "at_peak": {},
            "collective_durations_ns": [d for _, _, d in collectives],
            "collective_communicators": [c for c, _, _ in collectives],
            "collective_sequences": [n for _, n, _ in collectives],
            "communicators": [{"key": k, "nranks": n, "rank": r} for k, n, r in communicators]}


def run_case(fleet, ranks, identities=True):
    full = []
    for r in ranks:
        if not identities:
            for key in ("collective_communicators", "collective_sequences", "communicators"):
                r.pop(key)
        summary_rank = {**{k: v for k, v in r.items() if not k.startswith("collective_") and k != "communicators"},
                        "collective_durations_ns": r["collective_durations_ns"],
                        "collective_ids": fleet.collective_ids(r),
                        "communicators": [{"key": c["key"], "nranks": c["nranks"], "rank": c["rank"]}
                                          for c in r.get("communicators") or []]}
        full.append({"path": f"rank-{r['rank']}.sqlite", "window_s": 1.0, "iterations": 4, "iteration_s": 0.25,
                     "peak_bytes": 0, "at_peak": {}, "ranks": [summary_rank], "analysis_s": 0.0})
    rows = fleet.flatten([fleet.light(s) for s in full])
    waits = fleet.add_waits(rows, InPlace(fleet, full))
    return waits, {r["rank"]: r["wait_s"] for r in rows}


def near(got, want_us):
    return got is not None and abs(got - want_us * 1e-6) < 1e-12


def shifted(fleet):
    # One communicator; rank 0's window holds launches 2..8, rank 1's 3..9: equal counts, one apart.
    # Rank 1 arrives 50 us late at every collective: rank 0's kernels last 150 us, rank 1's 100 us.
    r0 = rank(0, [("w", 2, 0)], [(0, n, 150_000) for n in range(2, 9)])
    r1 = rank(1, [("w", 2, 1)], [(0, n, 100_000) for n in range(3, 10)])
    r1["collective_durations_ns"][0] = 10_000_000  # launch 3: rank 1 waited 9.9 ms there (rank 0 late once)
    r0["collective_durations_ns"][1] = 100_000
    waits, got = run_case(fleet, [r0, r1])
    check(waits["computed"] and waits["collectives"] == 6, f"shifted: 6 collectives matched ({waits})")
    check(near(got[0], 5 * 50) and near(got[1], 9_900), f"shifted: waits {got}, want 250 us and 9900 us")
    check(waits["left_out"] == {"collectives not in every member's window (the traces' windows differ)": 2},
          f"shifted: the two collectives of one window only left out ({waits['left_out']})")
    # Matched by order the same windows pair launch k with k+1 (the fault this replaces).
    waits, got = run_case(fleet, [r0, r1], identities=False)
    check(waits["matched_by"] == "order" and waits["computed"] and not near(got[1], 9_900),
          f"by order (reports without identities): computed, and wrong as expected ({got})")


def two_communicators(fleet):
    # World (4 ranks, launches 0..3) and a subgroup of ranks 0 and 1 (launches 0..1); rank 3 is the
    # last to arrive in the world's collectives, rank 0 in the subgroup's.
    world = lambda r: [(0, n, 100_000 if r == 3 else 100_000 + 10_000 * (r + 1)) for n in range(4)]
    sub = lambda r: [(1, n, 200_000 if r == 0 else 230_000) for n in range(2)]
    ranks = [rank(r, [("w", 4, r)] + ([("s", 2, r)] if r < 2 else []), world(r) + (sub(r) if r < 2 else []))
             for r in range(4)]
    waits, got = run_case(fleet, ranks)
    check(waits["computed"] and waits["communicators"] == 2 and waits["collectives"] == 6 and not waits["left_out"],
          f"two communicators: 4 + 2 collectives matched ({waits})")
    want = {0: 4 * 10, 1: 4 * 20 + 2 * 30, 2: 4 * 30, 3: 0}
    check(all(near(got[r], want[r]) for r in want), f"two communicators: waits {got}, want (us) {want}")


def look_alike(fleet):
    # Two subgroups {0,1} and {2,3} with the same size and calls: the same key on all four ranks.
    ranks = [rank(r, [("w", 4, r), ("s", 2, r % 2)], [(0, 0, 100_000 + r), (1, 0, 100_000 + 1000 * r)])
             for r in range(4)]
    waits, got = run_case(fleet, ranks)
    check(waits["computed"] and waits["collectives"] == 1 and waits["communicators"] == 1
          and waits["left_out"] == {"collectives on communicators that look alike (same size and first launches): not told apart": 1},
          f"look-alike subgroups left out, the world one matched ({waits})")
    check(all(near(got[r], r / 1000) for r in range(4)), f"look-alike: waits from the world collective only {got}")


def missing_rank(fleet):
    # A communicator of 3 ranks of which 2 are among the traces; and kernels without a call record.
    ranks = [rank(r, [("w", 2, r), ("t", 3, r)], [(0, 0, 100_000 + 5000 * r), (1, 0, 100_000), (None, None, 7)])
             for r in range(2)]
    waits, got = run_case(fleet, ranks)
    check(waits["computed"] and waits["collectives"] == 1 and waits["left_out"] == {
        "collectives on communicators some of whose ranks are not among the traces": 1,
        "communication kernels without an NCCL call record": 2}, f"incomplete communicator left out ({waits})")
    check(near(got[0], 0) and near(got[1], 5), f"incomplete communicator: waits {got}")


def main():
    fleet = load(sys.argv[1])
    shifted(fleet)
    two_communicators(fleet)
    look_alike(fleet)
    missing_rank(fleet)
    exit_if_failed()
    print("all checks passed")


if __name__ == "__main__":
    main()
