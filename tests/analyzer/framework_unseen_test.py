#!/usr/bin/env python3
"""The report's "Memory the framework cannot see" on a C++ sample with its own pool allocator,
against the simulator's ground truth and the sample's labels (docs/analyzer.md).

    framework_unseen_test.py TBDPROF MLP_TRAIN WORKDIR

Records `mlp_train --alloc pool --workspace W` under `tbdprof --sim` with TBDSIM_TRUTH (every device
allocation the simulated driver made, whoever asked) and TBD_SAMPLE_LABELS (the program's own
segments and tensors; allocations made inside libraries are not the program's and are not
labelled). Checks, without fixed numbers:
  - pool: the report's pool allocations are the labelled segments (count and bytes);
  - outside the pool: the truth's allocations in no labelled segment, in total and live at the
    report's peak, equal the report's library, NCCL and other kinds together;
  - the libraries' own: the truth's allocations the program never labelled equal library_own;
  - handed out of the pool: the one workspace tensor of W bytes the program gave cuBLAS is the one
    workspace range of the report;
  - the JSON report, framework_unseen included, matches schemas/report.schema.json (with jsonschema).
Exit 0 pass, 1 fail, 77 when tbdprof or mlp_train is not built.
"""

import json
import os
import sqlite3
import subprocess
import sys

WORKSPACE_BYTES = 4 << 20
DEVICE_KINDS = ("device", "device_async", "managed")


def read_labels(path):
    segments, labelled, workspaces = [], set(), []
    with open(path) as lines:
        for line in lines:
            fields = line.rstrip("\n").split("\t")
            address, size = int(fields[1], 16), int(fields[2])
            if fields[0] == "segment":
                segments.append((address, size))
            if fields[0] in ("segment", "alloc"):
                labelled.add(address)
            if fields[0] == "alloc" and fields[3] == "workspace" and size == WORKSPACE_BYTES:
                workspaces.append((address, size))
    return segments, labelled, workspaces


def read_truth(path):
    """[(address, bytes, alloc_ns, free_ns or None)] of device allocations, monotonic ns."""
    live, done = {}, []
    with open(path) as lines:
        for line in lines:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "alloc" and fields[5] in DEVICE_KINDS:
                live[int(fields[7], 16) if fields[7].startswith("0x") else int(fields[7])] = (int(fields[6]), int(fields[4]))
            elif fields[0] == "free":
                address = int(fields[7], 16) if fields[7].startswith("0x") else int(fields[7])
                if address in live:
                    size, begin = live.pop(address)
                    done.append((address, size, begin, int(fields[4])))
    return done + [(address, size, begin, None) for address, (size, begin) in live.items()]


def schema_failures(report):
    """The report with its framework_unseen object against schemas/report.schema.json (the schema
    test's traces have no pool), when jsonschema is installed."""
    try:
        import jsonschema
    except ImportError:
        print("note: no jsonschema module: the report is not checked against its schema")
        return []
    schema_path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schemas", "report.schema.json")
    with open(schema_path) as f:
        schema = json.load(f)
    try:
        jsonschema.validate(report, schema)
    except jsonschema.ValidationError as error:
        return [f"the JSON report does not match its schema: {error.message}"]
    return []


def main():
    tbdprof, program, workdir = sys.argv[1:4]
    if not (os.access(tbdprof, os.X_OK) and os.access(program, os.X_OK)):
        print(f"skipped: {tbdprof} or {program} is not built")
        return 77
    os.makedirs(workdir, exist_ok=True)
    trace, truth_path, labels_path = (os.path.join(workdir, n) for n in ("run.sqlite", "truth", "labels"))
    for path in (truth_path, labels_path):
        if os.path.exists(path):
            os.remove(path)
    env = dict(os.environ, TBDSIM_TRUTH=truth_path, TBD_SAMPLE_LABELS=labels_path)
    subprocess.run([tbdprof, "--sim", "--force", "-q", "-o", trace, "--", program, "--alloc", "pool",
                    "--iterations", "3", "--workspace", str(WORKSPACE_BYTES)], env=env, check=True)
    report = json.loads(subprocess.run([tbdprof, "report", trace, "--format", "json", "-q"], check=True,
                                       capture_output=True, text=True).stdout)
    unseen = report["framework_unseen"]
    if unseen is None:
        print("FAIL: no framework_unseen section for a pooled run")
        return 1
    start_ns = sqlite3.connect(f"file:{trace}?mode=ro", uri=True).execute(
        "SELECT start_monotonic_ns FROM run").fetchone()[0]
    peak_ns = start_ns + round(report["memory"]["peak_s"] * 1e9)
    segments, labelled, workspaces = read_labels(labels_path)
    truth = read_truth(truth_path)
    outside = [t for t in truth if not any(s <= t[0] < s + n for s, n in segments)]
    at_peak = [t for t in outside if t[2] <= peak_ns and (t[3] is None or t[3] > peak_ns)]
    unlabelled = [t for t in truth if t[0] not in labelled]
    items = {item["kind"]: item for item in unseen["items"]}
    kinds = ("library_own", "nccl", "outside_pools")
    checks = {
        "pool allocations": (unseen["pool_allocations"], len(segments)),
        "pool bytes": (unseen["pool_total_bytes"], sum(n for _, n in segments)),
        "outside total": (sum(items[k]["total_bytes"] for k in kinds), sum(t[1] for t in outside)),
        "outside at peak": (sum(items[k]["at_peak_bytes"] for k in kinds), sum(t[1] for t in at_peak)),
        "library_own total": (items["library_own"]["total_bytes"], sum(t[1] for t in unlabelled)),
        "workspace ranges in pool": (items["library_workspace_in_pool"]["count"], len(workspaces)),
        "workspace bytes in pool": (items["library_workspace_in_pool"]["total_bytes"], sum(n for _, n in workspaces)),
    }
    failures = [f"{name}: report {got}, truth {want}" for name, (got, want) in checks.items() if got != want]
    failures += schema_failures(report)
    if not unlabelled or len(workspaces) != 1:
        failures.append(f"the run lacks what is checked: {len(unlabelled)} library allocations, "
                        f"{len(workspaces)} workspace tensors of {WORKSPACE_BYTES} bytes")
    print(json.dumps({name: want for name, (_, want) in checks.items()}))
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
