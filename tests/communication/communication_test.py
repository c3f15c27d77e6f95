#!/usr/bin/env python3
"""Communication figures of imported multi-rank Kineto traces against values known by construction
(make_rank_traces.py): per rank, per iteration, over ranks; the report's section in every format,
`check --max-exposed-communication / --max-rank-imbalance`, and a trace without communication.
usage: communication_test.py TBDPROF WORKDIR [SCHEMA]"""
import json, os, shutil, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
tbdprof, work = sys.argv[1], sys.argv[2]
schema = sys.argv[3] if len(sys.argv) > 3 else None
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
ITERATIONS, STEADY = 5, 4  # the steady window: every iteration but the first
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def run(*args, expect=0):
    done = subprocess.run([tbdprof, *args], capture_output=True, text=True)
    check(done.returncode == expect, f"tbdprof {' '.join(args)}: exit {done.returncode}, expected {expect}: {done.stderr.strip()}")
    return done.stdout


def make(out, *args):
    lines = subprocess.run([sys.executable, os.path.join(HERE, "make_rank_traces.py"), out, *args], check=True,
                           capture_output=True, text=True).stdout.splitlines()
    return [json.loads(line) for line in lines]


def imported(json_path):
    sqlite = json_path[:-5] + ".sqlite"
    run("import", json_path, "-o", sqlite, "--quiet")
    return sqlite


def near(a, b):
    return abs(a - b) <= 1e-9


def check_figures(got, want_us, scale, what):
    for key, name in (("time_s", "time"), ("computation_s", "computation"), ("overlapped_s", "overlapped"),
                      ("exposed_s", "exposed"), ("idle_s", "idle")):
        check(near(got[key], want_us[name] * scale * 1e-6), f"{what} {key} {got[key]} != {want_us[name] * scale} us")
    check(got["kernels"] == want_us["kernels"] * scale, f"{what} kernels {got['kernels']}")
    want_fraction = want_us["overlapped"] / want_us["time"]
    check(abs(got["overlap_fraction"] - want_fraction) < 1e-9, f"{what} overlap_fraction {got['overlap_fraction']}")


def per_rank_traces():
    """One trace per rank, as PyTorch writes them: the recorded rank, the figures, the section."""
    expected = make(os.path.join(work, "ranks"), "--ranks", "2", "--slow-rank", "1", "--iterations", str(ITERATIONS))
    for e in expected:
        trace = imported(os.path.join(work, "ranks", f"rank-{e['rank']}.json"))
        report = json.loads(run("report", trace, "--format", "json", "--quiet"))
        comm = report["communication"]
        check(comm["present"] and len(comm["ranks"]) == 1, f"rank {e['rank']}: one rank with communication")
        check(report["iterations"]["count"] == STEADY, f"rank {e['rank']}: {report['iterations']['count']} iterations")
        rank = comm["ranks"][0]
        check(rank["rank"] == e["rank"] and comm["world_size"] == 2, f"rank {e['rank']}: recorded rank {rank['rank']}")
        check_figures(rank, e["per_iteration_us"], STEADY, f"rank {e['rank']} window")
        check_figures(comm, e["per_iteration_us"], STEADY, f"rank {e['rank']} over ranks")
        check(len(rank["iterations"]) == STEADY, f"rank {e['rank']}: {len(rank['iterations'])} iteration rows")
        for i, it in enumerate(rank["iterations"]):
            check_figures(it, e["per_iteration_us"], 1, f"rank {e['rank']} iteration {i}")
        check(rank["wait_s"] is None and comm["imbalance"] is None, "one rank: no wait, no imbalance")
        if schema:
            validate(report)
        text = run("report", trace, "--quiet", "--wide")
        check("Communication" in text and "exposed" in text, "text report has the Communication section")
        check("## Communication" in run("report", trace, "--format", "markdown", "--quiet"), "markdown section")
        check(">Communication<" in run("report", trace, "--format", "html", "--quiet"), "html section")
        # Exposed share of the window: 200/1000 on rank 0, 150/1000 on the slow rank 1.
        share = e["per_iteration_us"]["exposed"] / 1000
        out = run("check", trace, "--max-exposed-communication", str(share + 0.01), "--quiet")
        check("ok" in out, f"exposed {share} within {share + 0.01}")
        out = run("check", trace, "--max-exposed-communication", str(share - 0.01), "--quiet", expect=1)
        check("FAIL  max-exposed-communication" in out, f"exposed {share} above {share - 0.01}: {out}")
        out = run("check", trace, "--max-rank-imbalance", "1.5", "--quiet", expect=1)
        check("cannot check rank imbalance" in out, f"imbalance of one rank: {out}")


def one_trace_of_all_ranks():
    """Three ranks (devices) in one trace, rank 1 slow: slowest, imbalance, waits."""
    expected = make(os.path.join(work, "one"), "--ranks", "3", "--slow-rank", "1", "--one-trace",
                    "--iterations", str(ITERATIONS), "--kernels-per-iteration", "40")
    trace = imported(os.path.join(work, "one", "all-ranks.json"))
    report = json.loads(run("report", trace, "--format", "json", "--quiet"))
    comm = report["communication"]
    check(len(comm["ranks"]) == 3, f"{len(comm['ranks'])} ranks in one trace")
    for e, rank in zip(expected, sorted(comm["ranks"], key=lambda r: r["device"])):
        check_figures(rank, e["per_iteration_us"], STEADY, f"device {rank['device']}")
        check(near(rank["wait_s"], e["per_iteration_us"]["wait"] * STEADY * 1e-6), f"device {rank['device']} wait {rank['wait_s']}")
    check(comm["slowest_device"] == 1, f"slowest device {comm['slowest_device']}, made slow: 1")
    # --collective-durations: each rank's collectives as they ran, what tbdprof fleet matches across traces
    # (bucket 1 lasts 200 us less the rank's lateness, bucket 2 150 us); nothing else changes.
    asked = json.loads(run("report", trace, "--format", "json", "--quiet", "--collective-durations"))
    extras = {rank["device"]: 200 - e["per_iteration_us"]["time"] + 150 for e, rank in
              zip(expected, sorted(comm["ranks"], key=lambda r: r["device"]))}
    for rank in asked["communication"]["ranks"]:
        want = [(200 - extras[rank["device"]]) * 1000, 150 * 1000] * STEADY
        check(rank.pop("collective_durations_ns") == want, f"device {rank['device']}: collective durations")
        # An imported trace records no NCCL call: no communicator, no launch numbers (the fleet matches by order).
        check(rank.pop("collective_communicators") == [] and rank.pop("communicators") == []
              and rank.pop("collective_sequences") == [], f"device {rank['device']}: no identities")
    check(asked == report, "--collective-durations adds only the durations and their identities")
    if schema:
        validate(json.loads(run("report", trace, "--format", "json", "--quiet", "--collective-durations")))
    check(comm["waited_for_device"] == 1, f"waited for device {comm['waited_for_device']}, made slow: 1")
    text = run("report", trace, "--quiet")
    check("the others waited for: " in text, "the report names the rank the others waited for")
    check(abs(comm["imbalance"] - 550 / 500) < 1e-9, f"imbalance {comm['imbalance']} != 1.1")
    check("ok" in run("check", trace, "--max-rank-imbalance", "1.15", "--quiet"), "imbalance 1.1 within 1.15")
    out = run("check", trace, "--max-rank-imbalance", "1.05", "--quiet", expect=1)
    check("FAIL  max-rank-imbalance" in out, f"imbalance 1.1 above 1.05: {out}")
    run("check", trace, "--max-rank-imbalance", "0.5", "--quiet", expect=2)  # a ratio below 1: bad input


def ranks_of_a_recording():
    """A multi-process recording names each process's rank in process_ranks: it wins over run notes."""
    import sqlite3
    source = os.path.join(work, "ranks", "rank-0.sqlite")
    trace = os.path.join(work, "recorded-ranks.sqlite")
    shutil.copy(source, trace)
    db = sqlite3.connect(trace)
    db.execute("CREATE TABLE IF NOT EXISTS process_ranks (process INTEGER PRIMARY KEY, rank INTEGER NOT NULL, "
               "local_rank INTEGER NOT NULL, world_size INTEGER NOT NULL)")
    process = db.execute("SELECT DISTINCT process FROM kernels").fetchall()
    check(len(process) == 1, f"one process in the imported trace: {process}")
    db.execute("INSERT INTO process_ranks VALUES (?, 5, 1, 8)", (process[0][0],))
    db.commit()
    db.close()
    comm = json.loads(run("report", trace, "--format", "json", "--quiet"))["communication"]
    check(comm["ranks"][0]["rank"] == 5 and comm["world_size"] == 8,
          f"process_ranks: rank {comm['ranks'][0]['rank']} of {comm['world_size']}, recorded 5 of 8")


def without_communication():
    path = os.path.join(HERE, "..", "..", "interop", "tests", "data", "small_kineto_memory.json")
    shutil.copy(path, os.path.join(work, "plain.json"))
    trace = imported(os.path.join(work, "plain.json"))
    report = json.loads(run("report", trace, "--format", "json", "--quiet"))
    check(not report["communication"]["present"] and report["communication"]["ranks"] == [], "no communication")
    check("Communication" not in run("report", trace, "--quiet"), "no Communication section without NCCL kernels")
    check("no communication kernels" in run("check", trace, "--max-exposed-communication", "0", "--quiet"),
          "exposed limit passes without communication")


def validate(report):
    try:
        import jsonschema
    except ImportError:
        return
    with open(schema) as f:
        jsonschema.validate(report, json.load(f))


per_rank_traces()
ranks_of_a_recording()
one_trace_of_all_ranks()
without_communication()
if failures:
    sys.exit(f"{len(failures)} checks failed")
print("communication figures as constructed, per rank, per iteration and across ranks")
