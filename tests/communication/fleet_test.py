#!/usr/bin/env python3
"""tbdprof-fleet on a local Dask cluster of two workers over 64 imported rank traces whose figures
are known by construction (make_rank_traces.py; rank 37 is slow): the slowest rank, the imbalance,
communication summed over ranks, memory per rank, the time each rank waited in collectives for rank 37
(from durations: no shared clock); a trace that cannot be read is listed and the rest compared (exit 1);
ranks whose windows hold different numbers of collectives get no waits; bad input exits 2.
usage: fleet_test.py TBDPROF FLEET WORKDIR   (FLEET: fleet/tbdprof-fleet; `tbdprof fleet` is tested too)   (exit 77 when no Python here has Dask distributed)"""
import json, os, shutil, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
tbdprof, fleet, work = sys.argv[1:4]
RANKS, SLOW, ITERATIONS, STEADY = 64, 37, 5, 4


def python_with_dask():
    for candidate in (sys.executable, "/usr/bin/python3", shutil.which("python3")):
        if candidate and subprocess.run([candidate, "-c", "import distributed"], capture_output=True).returncode == 0:
            return candidate
    return None


python = python_with_dask()
if python is None:
    print("skipped: no Python here has Dask distributed (Debian: apt-get install python3-distributed)")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
lines = subprocess.run([sys.executable, os.path.join(HERE, "make_rank_traces.py"), work, "--ranks", str(RANKS),
                        "--slow-rank", str(SLOW), "--iterations", str(ITERATIONS)],
                       check=True, capture_output=True, text=True).stdout.splitlines()
expected = {e["rank"]: e["per_iteration_us"] for e in map(json.loads, lines)}
traces = []
for rank in range(RANKS):
    trace = os.path.join(work, f"rank-{rank}.sqlite")
    subprocess.run([tbdprof, "import", os.path.join(work, f"rank-{rank}.json"), "-o", trace, "--quiet"], check=True)
    traces.append(trace)

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


started = time.monotonic()
# Through `tbdprof fleet`: it runs tbdprof-fleet next to it, whose workers run this tbdprof.
done = subprocess.run([tbdprof, "fleet", *traces, "--workers", "2", "--format", "json", "--quiet"],
                      capture_output=True, text=True)
print(f"fleet over {RANKS} traces on 2 local workers: {time.monotonic() - started:.1f} s")
check(done.returncode == 0, f"fleet exit {done.returncode}: {done.stderr[-2000:]}")
result = json.loads(done.stdout)
check(result["ranks"] == RANKS, f"{result['ranks']} ranks")
check(result["slowest"]["rank"] == SLOW, f"slowest rank {result['slowest']['rank']}, made slow: {SLOW}")
check(abs(result["imbalance"] - 550 / 500) < 1e-9, f"imbalance {result['imbalance']}")
want_time = sum(e["time"] for e in expected.values()) * STEADY * 1e-6
want_exposed = sum(e["exposed"] for e in expected.values()) * STEADY * 1e-6
c = result["communication"]
check(abs(c["time_s"] - want_time) < 1e-9, f"communication {c['time_s']} != {want_time}")
check(abs(c["exposed_s"] - want_exposed) < 1e-9, f"exposed {c['exposed_s']} != {want_exposed}")
check(abs(c["max_exposed_per_iteration_s"] - 200e-6) < 1e-12, f"worst exposed {c['max_exposed_per_iteration_s']}")
check(c["kernels"] == RANKS * 2 * STEADY, f"{c['kernels']} communication kernels")
check(sorted(r["rank"] for r in result["per_rank"]) == list(range(RANKS)), "every rank once")
check(all("at_peak" in r and "peak_bytes" in r for r in result["per_rank"]), "memory per rank")
# Waits from durations alone (one trace per rank, no shared clock): every rank's bucket 1 ends with the
# slow rank's, so each waited its own start's lead over the slow rank's, every steady iteration.
w = result["waits"]
check(w["computed"] and w["collectives"] == 2 * STEADY, f"waits: {w}")
check(w["waited_for_rank"] == SLOW, f"the others waited for rank {w['waited_for_rank']}, made slow: {SLOW}")
for r in result["per_rank"]:
    want_wait = expected[r["rank"]]["wait"] * STEADY * 1e-6
    check(r["wait_s"] is not None and abs(r["wait_s"] - want_wait) < 1e-9,
          f"rank {r['rank']} waited {r['wait_s']} s, constructed: {want_wait}")
check(all("collective_durations_ns" not in r for r in result["per_rank"]), "durations are not passed on")

# One trace that cannot be read: listed, the others compared, exit 1.
broken = os.path.join(work, "broken.sqlite")
with open(broken, "w") as f:
    f.write("not a trace")
done = subprocess.run([python, fleet, broken, *traces[:3], "--workers", "2", "--tbdprof", tbdprof, "--quiet"],
                      capture_output=True, text=True)
check(done.returncode == 1 and "not analysed: " + broken in done.stdout and "3 ranks" in done.stdout,
      f"a broken trace: exit {done.returncode}, {done.stdout[-500:]} {done.stderr[-500:]}")
check("waited in collectives: 0.000 ms over all ranks (8 collectives per rank" in done.stdout,
      f"three equal ranks wait for none: {done.stdout[-800:]}")
# A rank whose window holds fewer collectives: matching by order would pair different collectives.
short = os.path.join(work, "short.json")
with open(os.path.join(work, "rank-1.json")) as f:
    document = json.load(f)
last_start = max(e["ts"] for e in document["traceEvents"] if e["name"].startswith("ncclDevKernel"))
document["traceEvents"] = [e for e in document["traceEvents"] if e["ts"] != last_start or not e["name"].startswith("nccl")]
with open(short, "w") as f:
    json.dump(document, f)
subprocess.run([tbdprof, "import", short, "-o", short + ".sqlite", "--quiet"], check=True)
done = subprocess.run([python, fleet, traces[0], short + ".sqlite", "--workers", "1", "--tbdprof", tbdprof, "--quiet",
                       "--format", "json"], capture_output=True, text=True)
refused = json.loads(done.stdout)["waits"] if done.returncode == 0 else {}
check(refused.get("computed") is False and "different numbers of communication kernels" in (refused.get("note") or "")
      and all(r["wait_s"] is None for r in json.loads(done.stdout)["per_rank"]),
      f"unequal collective counts: exit {done.returncode}, {refused} {done.stderr[-500:]}")
done = subprocess.run([python, fleet, os.path.join(work, "missing.sqlite"), "--quiet"], capture_output=True, text=True)
check(done.returncode == 2 and "no such trace" in done.stderr, f"a missing trace: exit {done.returncode} {done.stderr}")
if failures:
    sys.exit(f"{len(failures)} checks failed")
print("fleet: slowest rank, imbalance, communication and waits as constructed")
