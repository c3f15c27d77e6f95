#!/usr/bin/env python3
"""Gradient buckets (P3 view) against the simulated GPU's ground truth (TBDSIM_TRUTH).

dp_train (samples/dp_train.cu) on 2 ranks, bucketed (--overlap buckets: 4 buckets of 2 layers, each
all-reduced on a communication stream as soon as backward has written it) and not (--overlap none: one
all-reduce of all gradients after backward, on the compute stream). From the truth alone and the
program's structure, per rank:
  - the collectives: every `nccl` line (arrival, end) and its `ncclDevKernel_*` kernel, in launch order
    (the kernel runs from the arrival, or its launch when the host launched it later, to the
    collective's end, or 2 us after its start when that is later);
  - the gradient writes going into a collective: the weight-gradient GEMMs (cuBLAS kernels `_nt_`,
    dp_train's gemm_weight_grad) launched since the rank's previous collective;
  - the first use of its result: the optimizer update of the bucket's first layer (sgd_momentum kernels
    run in layer order after backward), and how long it waited: its stream's previous other kernel's end
    to min(use start, collective end);
  - per round (one step: every bucket once) the exposed collective time, the computation between the
    first and the last gradient write not hiding communication, and the bound min(exposed, spare).
The report must give the same figures, to the nanosecond. With --zero (ZeRO/FSDP-like: each bucket
reduce-scattered into this rank's shard, the shard's update, the weights all-gathered back) the buckets
are the reduce-scatters (the all-gathers carry weights, no bucket), their first use the update of their
shard (dp_train updates the shards in bucket order), and the tagger's own tags must identify every one
of them (tagger/collectives.h). Otherwise the tags: the tagger's own tags on dp_train
either identify the buckets or the report says it cannot tell (a note, no buckets); the figures are
then checked on a copy whose all-reduced buffers carry dp_train's own label, gradients (the program
labels them so: its buckets are gradients that NCCL reduces in place).

usage: buckets_test.py TBDPROF DP_TRAIN WORK_DIR
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

from checks import check, exit_if_failed

LAYERS, BUCKETS = 8, 4


def record(tbdprof, dp_train, work, mode, zero=False):
    name = mode + ("_zero" if zero else "")
    trace, truth = os.path.join(work, name + ".sqlite"), os.path.join(work, name + ".truth.tsv")
    for path in (trace, truth):
        if os.path.exists(path):
            os.remove(path)
    env = dict(os.environ, TBDSIM_TRUTH=truth)
    command = [tbdprof, "--sim", "-o", trace, "--", dp_train, "--ranks", "2", "--iterations", "5", "--hidden", "1024",
               "--batch", "512", "--layers", str(LAYERS), "--buckets", str(BUCKETS), "--overlap", mode] + \
        (["--zero"] if zero else [])
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"recording dp_train --overlap {mode} failed ({result.returncode}): {result.stderr[-2000:]}")
    return trace, truth


def report(tbdprof, trace):
    result = subprocess.run([tbdprof, "report", trace, "--format", "json"], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"tbdprof report {trace} failed: {result.stderr}")
    return json.loads(result.stdout)


def read_truth(path):
    kernels, collectives = {}, {}
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "kernel":
                pid = int(fields[1])
                kernels.setdefault(pid, []).append({"correlation": int(fields[2]), "stream": int(fields[3]),
                                                    "start": int(fields[4]), "end": int(fields[5]), "name": fields[11]})
            elif fields[0] == "nccl":
                collectives.setdefault(int(fields[1]), []).append(
                    {"op": fields[3], "nranks": int(fields[5]), "bytes": int(fields[7]), "arrival": int(fields[11]),
                     "end": int(fields[12])})
    for pid in kernels:
        kernels[pid].sort(key=lambda k: k["correlation"])
    return kernels, collectives


def union(intervals):
    merged = []
    for b, e in sorted(i for i in intervals if i[1] > i[0]):
        if merged and b <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([b, e])
    return merged


def measure(u, lo, hi):
    return sum(max(0, min(e, hi) - max(b, lo)) for b, e in u)


def intersect(u, v):
    out = []
    for b1, e1 in u:
        for b2, e2 in v:
            b, e = max(b1, b2), min(e1, e2)
            if e > b:
                out.append([b, e])
    return union(out)


def expected_buckets(kernels, collectives, buckets_per_round, zero=False):
    """Per bucket of one rank (each all-reduce, or with --zero each reduce-scatter), in launch order: the
    figures from the truth and dp_train's structure."""
    nccl = [k for k in kernels if k["name"].startswith("ncclDevKernel")]
    other = [k for k in kernels if not k["name"].startswith("ncclDevKernel")]
    if len(nccl) != len(collectives):
        sys.exit(f"truth: {len(nccl)} NCCL kernels, {len(collectives)} nccl lines")
    per_layer = (LAYERS + buckets_per_round - 1) // buckets_per_round
    pairs = [(k, line) for k, line in zip(nccl, collectives) if not zero or line["op"] == "ReduceScatter"]
    nccl = [k for k, _ in pairs]
    out, previous = [], -1
    for i, (kernel, line) in enumerate(pairs):
        writes = [k for k in other if previous < k["correlation"] < kernel["correlation"] and "_nt_" in k["name"]]
        previous = kernel["correlation"]
        round_index, position = divmod(i, buckets_per_round)
        last_in_round = nccl[round_index * buckets_per_round + buckets_per_round - 1]
        updates = [k for k in other if k["correlation"] > last_in_round["correlation"] and "sgd_momentum" in k["name"]]
        # The update runs in layer order after DDP's all-reduces; with --zero one update per shard, in
        # bucket order.
        first = position if zero else max(0, LAYERS - (position + 1) * per_layer)
        use = updates[first] if len(updates) > first else None
        waited = None
        if use:
            before = [k for k in other if k["stream"] == use["stream"] and k["start"] < use["start"]]
            ready = max(k["end"] for k in before)
            waited = max(0, min(use["start"], kernel["end"]) - ready)
        # A reduce-scatter's count is per rank: its input, the bucket, holds every rank's part.
        bucket_bytes = line["bytes"] * (line["nranks"] if zero else 1)
        out.append({"start": kernel["start"], "end": kernel["end"], "arrival": line["arrival"], "truth_end": line["end"],
                    "bytes": bucket_bytes, "round": round_index, "position": position,
                    "first_write_end": min(k["end"] for k in writes) if writes else None,
                    "last_write_end": max(k["end"] for k in writes) if writes else None,
                    "use_start": use["start"] if use else None, "waited": waited})
    return out


def ns(seconds, origin):
    return None if seconds is None else round(seconds * 1e9) + origin


def compare_buckets(mode, got, want, origin):
    by_key = {(b["round"], b["position"]): b for b in want}
    mismatches = 0
    for b in got:
        w = by_key.get((b["round"], b["position"]))
        if w is None:
            mismatches += 1
            print(f"  {mode}: no collective in the truth for round {b['round']} position {b['position']}")
            continue
        pairs = [("start_s", w["start"]), ("end_s", w["end"]),
                 ("last_gradient_write_end_s", w["last_write_end"]), ("first_gradient_write_end_s", w["first_write_end"]),
                 ("next_use_start_s", w["use_start"])]
        for key, value in pairs:
            if value is None or abs(ns(b[key], origin) - value) > 1:
                mismatches += 1
                print(f"  {mode} round {b['round']} bucket {b['position']}: {key} {ns(b[key], origin)}, truth {value}")
        derived = [("slack_s", w["start"] - w["last_write_end"]), ("duration_s", w["end"] - w["start"]),
                   ("next_use_waited_s", w["waited"]), ("wait_s", w["rank_wait"])]
        for key, value in derived:
            if value is None or b[key] is None or abs(round(b[key] * 1e9) - value) > 1:
                mismatches += 1
                print(f"  {mode} round {b['round']} bucket {b['position']}: {key} {b[key]}, truth {value}")
        # The kernel starts at the rank's arrival, or later when the host launched it later, and ends with
        # the collective, or 2 us after its start when that is later still.
        if b["bytes"] != w["bytes"] or w["arrival"] > w["start"] or w["truth_end"] > w["end"]:
            mismatches += 1
            print(f"  {mode}: bytes {b['bytes']} (truth {w['bytes']}), arrival {w['arrival']}, collective end "
                  f"{w['truth_end']}, kernel {w['start']}-{w['end']}")
    return mismatches


def add_rank_waits(want_by_pid):
    """A collective proceeds once the last rank has started it: each rank's wait is the difference."""
    latest = {}
    for want in want_by_pid.values():
        for w in want:
            key = (w["round"], w["position"])
            latest[key] = max(latest.get(key, w["start"]), w["start"])
    for want in want_by_pid.values():
        for w in want:
            w["rank_wait"] = min(max(0, latest[(w["round"], w["position"])] - w["start"]), w["end"] - w["start"])


def expected_round(kernels, buckets, window):
    """Exposed collective time (all, and after the last rank arrived), spare computation and the bound
    of one round, from the truth."""
    compute = union([[k["start"], k["end"]] for k in kernels if not k["name"].startswith("ncclDevKernel")])
    comm = union([[k["start"], k["end"]] for k in kernels if k["name"].startswith("ncclDevKernel")])
    compute = intersect(compute, [window])
    comm = intersect(comm, [window])

    def exposed_of(intervals):
        u = intersect(union(intervals), [window])
        return measure(u, *window) - measure(intersect(u, compute), *window)

    exposed = exposed_of([[b["start"], b["end"]] for b in buckets])
    after_arrival = exposed_of([[b["start"] + b["rank_wait"], b["end"]] for b in buckets])
    lo, hi = min(b["first_write_end"] for b in buckets), max(b["last_write_end"] for b in buckets)
    spare = measure(compute, lo, hi) - measure(intersect(compute, comm), lo, hi)
    return exposed, after_arrival, spare, min(after_arrival, spare)


def compare_with_truth(name, r, trace, truth_path, per_round, zero=False):
    """The report's buckets and rounds against the truth; returns (mismatches, rounds checked)."""
    c = r["communication"]
    db = sqlite3.connect(trace)
    pids = dict(db.execute("SELECT id, pid FROM processes"))
    origin = db.execute("SELECT start_monotonic_ns FROM run").fetchone()[0]
    db.close()
    window = [ns(r["window"]["begin_s"], origin), ns(r["window"]["end_s"], origin)]
    kernels, collectives = read_truth(truth_path)
    mismatches, rounds_checked = 0, 0
    want_by_pid = {pid: expected_buckets(kernels[pid], collectives[pid], per_round, zero) for pid in pids.values()}
    add_rank_waits(want_by_pid)
    in_window = sum(window[0] <= w["start"] < window[1] for want in want_by_pid.values() for w in want)
    if len(c["buckets"]) != in_window:
        mismatches += 1
        print(f"  {name}: {len(c['buckets'])} buckets, {in_window} in the window by the truth")
    for process, pid in pids.items():
        want = want_by_pid[pid]
        mismatches += compare_buckets(name, [b for b in c["buckets"] if b["process"] == process], want, origin)
        for rnd in (x for x in c["bucket_rounds"] if x["process"] == process):
            members = [w for w in want if w["round"] == rnd["round"]]
            expected = expected_round(kernels[pid], [w for w in members if window[0] <= w["start"] < window[1]],
                                      window)
            keys = ("exposed_s", "exposed_after_arrival_s", "spare_computation_s", "overlap_savings_bound_s")
            got = [round(rnd[k] * 1e9) for k in keys]
            if any(abs(g - e) > 2 for g, e in zip(got, expected)):
                mismatches += 1
                print(f"  {name} pid {pid} round {rnd['round']}: {keys} {got}, truth {list(expected)}")
            rounds_checked += 1
    return mismatches, rounds_checked


def check_zero(tbdprof, dp_train, work):
    """dp_train --zero: the tagger's own tags make every reduce-scatter a bucket, with the truth's figures."""
    trace, truth_path = record(tbdprof, dp_train, work, "buckets", zero=True)
    r = report(tbdprof, trace)
    c = r["communication"]
    ops = sorted({b["op"] for b in c["buckets"]})
    check(c["buckets"] and ops == ["reduce_scatter"] and c["unidentified_collectives"] == 0,
          f"--zero, the tagger's own tags: {len(c['buckets'])} buckets, all reduce-scatters ({ops}), "
          f"{c['unidentified_collectives']} collectives the tags do not identify")
    mismatches, rounds_checked = compare_with_truth("zero", r, trace, truth_path, BUCKETS, zero=True)
    check(mismatches == 0 and rounds_checked,
          f"--zero: {len(c['buckets'])} buckets and {rounds_checked} rounds match the truth to the nanosecond")
    return c


def check_mode(tbdprof, dp_train, work, mode):
    trace, truth_path = record(tbdprof, dp_train, work, mode)
    as_tagged = report(tbdprof, trace)["communication"]
    tagged_total = len(as_tagged["buckets"]) + as_tagged["unidentified_collectives"]
    check(tagged_total == as_tagged["kernels"],
          f"{mode}, the tagger's tags: {len(as_tagged['buckets'])} buckets + {as_tagged['unidentified_collectives']} "
          f"collectives the tags do not identify = {as_tagged['kernels']} all-reduce kernels in the window")
    labelled = os.path.join(work, mode + ".labelled.sqlite")
    shutil.copyfile(trace, labelled)
    db = sqlite3.connect(labelled)
    db.execute("UPDATE allocation_categories SET category = 'gradients' WHERE allocation IN "
               "(SELECT l.a_allocation FROM nccl_calls n JOIN library_calls l ON l.id = n.library_call)")
    db.commit()
    db.close()
    r = report(tbdprof, labelled)
    c = r["communication"]
    per_round = BUCKETS if mode == "buckets" else 1
    check(len(c["buckets"]) == c["kernels"] and c["unidentified_collectives"] == 0,
          f"{mode}: every all-reduce in the window is a bucket ({len(c['buckets'])} of {c['kernels']})")
    mismatches, rounds_checked = compare_with_truth(mode, r, labelled, truth_path, per_round)
    check(mismatches == 0 and c["buckets"] and rounds_checked,
          f"{mode}: {len(c['buckets'])} buckets and {rounds_checked} rounds match the truth to the nanosecond")
    return c, (r["window"]["begin_s"], r["window"]["end_s"])


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    tbdprof, dp_train, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    bucketed, _ = check_mode(tbdprof, dp_train, work, "buckets")
    single, single_window = check_mode(tbdprof, dp_train, work, "none")
    zero = check_zero(tbdprof, dp_train, work)
    # The program's structure: the update waits for the bucket reduced last (its layers are updated
    # first, right after backward) and for the single all-reduce; no other bucket's update waits.
    last = [b for b in bucketed["buckets"] if b["position"] == BUCKETS - 1]
    others = [b for b in bucketed["buckets"] if b["position"] < BUCKETS - 1]
    check(last and all(b["next_use_waited_s"] > 0 for b in last) and all(b["next_use_waited_s"] == 0 for b in others),
          "buckets: only the update of the last bucket's layers waited for its all-reduce")
    check(single["buckets"] and all(b["next_use_waited_s"] > 0 for b in single["buckets"]),
          "none: the update waited for the one all-reduce after backward")
    # With one all-reduce after backward on the compute stream, nothing overlaps it: once both ranks have
    # arrived it is exposed for the simulated NCCL's modelled time for 32 MiB on 2 ranks (docs/simgpu-nccl.md:
    # ring Simple, 4 + 2 x 2.5 us + 32 MiB / 370 GB/s = 99.688 us), and backward computation after the first
    # gradient (7 layers' GEMMs) is longer: the bound of a round the window holds whole is that time.
    modelled_s = (4 + 2 * 2.5) * 1e-6 + (8 << 22) / 370e9
    whole = [x for x in single["bucket_rounds"] if x["first_gradient_write_end_s"] >= single_window[0]]
    # Once both ranks have arrived, the collective runs its modelled time (unless a rank's host launched
    # its kernel after the other's collective ended: then 2 us), so the bound of almost every round is it.
    bounds = [x["overlap_savings_bound_s"] for x in whole]
    check(bounds and sum(bounds) / len(bounds) >= modelled_s / 2 and max(bounds) <= modelled_s + 1e-9,
          f"none: the mean bound of {len(whole)} whole rounds, {sum(bounds) / max(len(bounds), 1) * 1e6:.3f} us, is "
          f"the modelled all-reduce ({modelled_s * 1e6:.3f} us) or near it, never above")
    for name, c in (("buckets", bucketed), ("none", single), ("zero", zero)):
        slack = [b["slack_s"] for b in c["buckets"]]
        if not slack:
            continue
        print(f"     {name}: mean slack {sum(slack) / len(slack) * 1e6:.3f} us, bound per round "
              f"{c['overlap_savings_bound_per_round_s'] * 1e6:.3f} us, rounds {len(c['bucket_rounds'])}")
    exit_if_failed()


if __name__ == "__main__":
    main()
