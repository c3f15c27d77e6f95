#!/usr/bin/env python3
"""`tbdprof fleet` over per-rank traces of a job whose subgroups look alike: dp_train on 4 ranks with
--subgroups 2 (ncclCommSplit of the world communicator by color: ranks {0, 1} and {2, 3}), each
subgroup all-reducing the same metrics buffer after every step, rank 1 slowed on the host. The two
subgroups have one size and issue the same calls, so their size and first launches cannot tell them
apart; the identity the collector records at each communicator's creation (a hash of the parent's
identity, the split's number and the color, the same on both ranks of a subgroup) does. Recorded on
one host, split into one trace per rank on clocks apart (split_hosts.py), compared by the fleet:
three communicators matched, every subgroup collective within its own group, the waits against the
one-clock truth as fleet_communicators_test.py checks them (fleet_waits_test.py's helpers).

usage: fleet_look_alike_test.py TBDPROF DP_TRAIN WORK_DIR   (exit 77 when no Python here has Dask distributed)"""
import sys

import fleet_waits_test as common

RANKS = 4
SKEWS_NS = {0: 0, 1: 3_700_000_000, 2: 1_250_000_000, 3: 950_000_000}  # each rank's clock, from the one clock


def main():
    tbdprof, dp_train, work = sys.argv[1:4]
    fleet = common.fleet_of_split_run(tbdprof, dp_train, work, RANKS, SKEWS_NS, "--subgroups", "2")
    if fleet is not None:
        waits = fleet["waits"]
        common.check(waits["communicators"] == 3, f"three communicators matched (the world, two subgroups): {waits}")
        common.check(not any("look alike" in why for why in waits.get("left_out", {})),
                     f"no collective left out as on look-alike communicators: {waits.get('left_out')}")
        matched = {r["rank"]: r["collectives_matched"] for r in fleet["per_rank"]}
        common.check(len(set(matched.values())) == 1 and matched[0] > 0,
                     f"every rank matched on the world and its own subgroup alike: {matched}")
        common.check(waits["waited_for_rank"] == 1, f"the others waited for rank {waits['waited_for_rank']} (slow: 1)")
    common.finish()


if __name__ == "__main__":
    main()
