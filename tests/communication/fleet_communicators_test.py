#!/usr/bin/env python3
"""`tbdprof fleet` over per-rank traces of a job with two communicators: dp_train on 4 ranks, whose
ranks 0 and 1 also all-reduce a metrics buffer on a communicator of their own (--subgroup-ranks 2,
ncclCommSplit of the world one), rank 1 slowed on the host before each step. Recorded on one host,
split into one trace per rank on clocks apart (split_hosts.py), compared by the fleet: ranks 0 and 1
run three collectives a step, ranks 2 and 3 two, so matching by order could not pair them (the counts
differ); matched by communicator and launch number, each collective is compared over its own
communicator's ranks. The truth and the tolerance come from the one-clock trace as in
fleet_waits_test.py (whose helpers this uses).

usage: fleet_communicators_test.py TBDPROF DP_TRAIN WORK_DIR   (exit 77 when no Python here has Dask distributed)"""
import sys

import fleet_waits_test as common

RANKS = 4
SKEWS_NS = {0: 0, 1: 3_700_000_000, 2: 1_250_000_000, 3: 950_000_000}  # each rank's clock, from the one clock


def main():
    tbdprof, dp_train, work = sys.argv[1:4]
    fleet = common.fleet_of_split_run(tbdprof, dp_train, work, RANKS, SKEWS_NS, "--subgroup-ranks", "2")
    if fleet is not None:
        waits = fleet["waits"]
        common.check(waits["communicators"] == 2, f"two communicators matched: {waits}")
        matched = {r["rank"]: r["collectives_matched"] for r in fleet["per_rank"]}
        common.check(matched[0] == matched[1] > matched[2] == matched[3] > 0,
                     f"ranks 0 and 1 matched on both communicators, 2 and 3 on the world one: {matched}")
        common.check(waits["waited_for_rank"] == 1, f"the others waited for rank {waits['waited_for_rank']} (slow: 1)")
    common.finish()


if __name__ == "__main__":
    main()
