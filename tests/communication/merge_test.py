#!/usr/bin/env python3
"""`tbdprof merge` of per-host traces whose clocks were shifted on purpose.

dp_train (samples/dp_train.cu) on 4 ranks, recorded on one host: one trace, one clock. split_hosts.py
makes three "host" traces of it: ranks 0 and 1 on the reference clock, rank 2 on a clock 3.7 s ahead,
rank 3 on one 12 ms behind. Merged, the offsets recovered from the collectives must be the skews
(within 1 us), and the merged trace must hold every row of the original (the same counts, kernel ids
still in start order) and give the same communication figures in `tbdprof report --format json`.
Then the refusals: a file that is no trace, the same rank twice, different world sizes, inputs that
share no collective (accepted with --offset-ns), one input; none leaves an output behind.

usage: merge_test.py TBDPROF DP_TRAIN WORK_DIR"""
import json
import os
import shutil
import sqlite3
import sys

from checks import check, exit_if_failed, run

HERE = os.path.dirname(os.path.abspath(__file__))
SKEWS_NS = {"a": 0, "b": 3_700_000_000, "c": -12_000_000}
RANKS = {"a": "0,1", "b": "2", "c": "3"}
COUNTED = ["processes", "threads", "streams", "kernels", "copies", "sets", "allocations", "allocation_categories",
           "library_calls", "nccl_calls", "process_ranks", "ranges", "iterations", "phases", "kernel_allocations",
           "api_calls", "functions", "cpu_samples"]


def record(tbdprof, dp_train, work):
    trace = os.path.join(work, "all.sqlite")
    command = [tbdprof, "--sim", "--force", "-o", trace, "--", dp_train, "--ranks", "4", "--iterations", "4",
               "--hidden", "512", "--batch", "256", "--layers", "4", "--buckets", "2", "--overlap", "buckets"]
    result = run(command, env=dict(os.environ, TBDSIM_DEVICE_COUNT="4"))
    if result.returncode != 0:
        sys.exit(f"recording dp_train failed ({result.returncode}): {result.stderr[-2000:]}")
    return trace


def split(trace, work):
    hosts = {}
    for host, ranks in RANKS.items():
        hosts[host] = os.path.join(work, f"host-{host}.sqlite")
        result = run([sys.executable, os.path.join(HERE, "split_hosts.py"), trace, hosts[host], "--ranks", ranks,
                      "--skew-ns", str(SKEWS_NS[host])] + (["--with-unranked"] if host == "a" else []))
        if result.returncode != 0:
            sys.exit(f"split_hosts.py failed: {result.stderr}")
    return hosts


def communication(tbdprof, trace):
    result = run([tbdprof, "report", trace, "--format", "json"])
    if result.returncode != 0:
        sys.exit(f"tbdprof report {trace} failed: {result.stderr}")
    return json.loads(result.stdout).get("communication")


def counts(trace):
    db = sqlite3.connect(trace)
    found = {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in COUNTED}
    db.close()
    return found


def notes(trace):
    db = sqlite3.connect(trace)
    found = dict(db.execute("SELECT key, value FROM run_notes WHERE key LIKE 'merge.%'").fetchall())
    db.close()
    return found


def check_merged(tbdprof, original, hosts, merged):
    result = run([tbdprof, "merge", hosts["a"], hosts["b"], hosts["c"], "-o", merged])
    check(result.returncode == 0, f"merge of three host traces exits 0 ({result.returncode}: {result.stderr.strip()})")
    if result.returncode != 0:
        return
    print(result.stdout, end="")
    found = notes(merged)
    for index, host in enumerate("abc"):
        offset = int(found.get(f"merge.input.{index}.offset_ns", "nan"))
        error_ns = abs(offset + SKEWS_NS[host])
        check(error_ns <= 1000, f"host {host}: recovered offset {offset} ns, truth {-SKEWS_NS[host]} ns "
                                f"(error {error_ns} ns <= 1 us)")
        if index > 0:
            matched = int(found[f"merge.input.{index}.matched_collectives"])
            agreeing = int(found[f"merge.input.{index}.agreeing_collectives"])
            check(matched > 0 and 2 * agreeing > matched,
                  f"host {host}: {matched} collective end differences matched, {agreeing} within 1 us of the offset, "
                  f"spread {found[f'merge.input.{index}.offset_spread_ns']} ns")
    want, got = counts(original), counts(merged)
    for table in COUNTED:
        check(want[table] == got[table], f"{table}: {got[table]} rows merged, {want[table]} in the original")
    db = sqlite3.connect(merged)
    starts = [r[0] for r in db.execute("SELECT start_ns FROM kernels ORDER BY id")]
    check(starts == sorted(starts), "merged kernel ids are in start order")
    db.close()
    want_comm, got_comm = communication(tbdprof, original), communication(tbdprof, merged)
    check(want_comm is not None and want_comm.get("ranks"), "the original's report has per-rank communication")
    check(got_comm == want_comm, "merged communication figures equal the original's"
          + ("" if got_comm == want_comm else f"\n  original: {json.dumps(want_comm)[:1500]}\n  merged:   "
                                              f"{json.dumps(got_comm)[:1500]}"))


def refuse(tbdprof, arguments, output, expected, status=1):
    result = run([tbdprof, "merge", *arguments, "-o", output])
    check(result.returncode == status and expected in result.stderr,
          f"refused ({result.returncode}): {result.stderr.strip()}")
    check(not os.path.exists(output), f"nothing written to {os.path.basename(output)}")


def check_refusals(tbdprof, hosts, work):
    out = os.path.join(work, "refused.sqlite")
    junk = os.path.join(work, "junk.sqlite")
    with open(junk, "w") as f:
        f.write("not a trace\n")
    refuse(tbdprof, [hosts["a"], junk], out, junk)
    twin = os.path.join(work, "twin.sqlite")
    shutil.copyfile(hosts["b"], twin)
    refuse(tbdprof, [hosts["a"], hosts["b"], twin], out, "rank 2 is in")
    bigger = os.path.join(work, "world8.sqlite")
    shutil.copyfile(hosts["c"], bigger)
    db = sqlite3.connect(bigger)
    db.execute("UPDATE process_ranks SET world_size = 8")
    db.commit()
    db.close()
    refuse(tbdprof, [hosts["a"], bigger], out, "world size")
    silent = os.path.join(work, "no-nccl.sqlite")
    shutil.copyfile(hosts["b"], silent)
    db = sqlite3.connect(silent)
    db.execute("DELETE FROM nccl_calls")
    db.commit()
    db.close()
    refuse(tbdprof, [hosts["a"], silent], out, "share(s) no NCCL collective")
    refuse(tbdprof, [hosts["a"]], out, "at least two traces", status=2)
    before = os.path.getsize(hosts["a"])
    result = run([tbdprof, "merge", hosts["a"], hosts["b"], "-o", hosts["a"], "--force"])
    check(result.returncode == 1 and os.path.getsize(hosts["a"]) == before,
          f"an input as the output refused, input untouched ({result.returncode}: {result.stderr.strip()})")
    given = os.path.join(work, "given.sqlite")
    result = run([tbdprof, "merge", hosts["a"], silent, "--offset-ns", "0", "--offset-ns", str(-SKEWS_NS["b"]),
                  "-o", given, "--force"])
    check(result.returncode == 0, f"--offset-ns once per input merges without collectives ({result.stderr.strip()})")
    refuse(tbdprof, [hosts["a"], hosts["b"], "--offset-ns", "0"], out, "once per input")
    # Host b moved 0.2 s further back than its skew: its first events fall before the reference's time 0,
    # so every time moves later by what it takes to keep none negative.
    early = os.path.join(work, "early.sqlite")
    result = run([tbdprof, "merge", hosts["a"], hosts["b"], "--offset-ns", "0", "--offset-ns",
                  str(-SKEWS_NS["b"] - 200_000_000), "-o", early, "--force", "--quiet"])
    check(result.returncode == 0, f"merge with an input before time 0 ({result.stderr.strip()})")
    if result.returncode == 0:
        db = sqlite3.connect(early)
        first = db.execute("SELECT min(start_ns) FROM kernels").fetchone()[0]
        shift = int(db.execute("SELECT value FROM run_notes WHERE key = 'merge.shift_ns'").fetchone()[0])
        db.close()
        db = sqlite3.connect(hosts["b"])
        b_first = db.execute("SELECT min(t) FROM (SELECT min(start_ns) AS t FROM processes UNION ALL "
                             "SELECT min(start_ns) FROM kernels UNION ALL SELECT min(alloc_ns) FROM allocations)").fetchone()[0]
        db.close()
        want = -(b_first - SKEWS_NS["b"] - 200_000_000)
        check(first >= 0 and shift == want, f"no negative time (first kernel at {first} ns), merge.shift_ns {shift} "
                                            f"(expected {want})")


def main():
    tbdprof, dp_train, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    original = record(tbdprof, dp_train, work)
    hosts = split(original, work)
    check_merged(tbdprof, original, hosts, os.path.join(work, "merged.sqlite"))
    if os.path.exists(os.path.join(work, "merged.sqlite")):
        os.remove(os.path.join(work, "merged.sqlite"))
    check_refusals(tbdprof, hosts, work)
    exit_if_failed()
    print("all checks passed")


if __name__ == "__main__":
    main()
