#!/usr/bin/env python3
"""Runs a PyTorch sample once and scores three opinions of its memory against one another.

    score.py --python PY [--tbdprof TBDPROF --tag-accuracy TOOL [--real-gpu]] --allocator caching|expandable|preset
             [--min 0.95] [--min-script 0.99] [--json FILE] [--workdir DIR] SAMPLE.py [sample options...]

One run writes both label files (oracle/export.py: torch.profiler's categories; oracle/script_truth.py:
what the script knows); a third, torch.profiler's corrected by the script where the script knows
better (write_reconciled), is what tbdprof is held to; the uncorrected figure is printed too. With --tbdprof the run is recorded by `tbdprof --sim` (with --framework=pytorch
for the preset) and the trace's tags are scored against both label files by tbdprof-tag-accuracy;
without it the sample runs on the CPU and only the two label files are compared.

Prints one line per comparison and exits 1 when tbdprof agrees with torch.profiler on fewer than
--min of the bytes both categorize (after the mapping in export.py), or torch.profiler with the
script on fewer than --min-script, 77 when the run cannot be made
here (PyTorch missing, or the simulated GPU cannot run it yet), 2 on bad options.
"""

import argparse
import collections
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

import unseen
from simgpu_libraries import with_simgpu_first

SKIP = 77
ALLOCATORS = {"caching": None, "expandable": "expandable_segments:True", "preset": None}


def read_allocs(path):
    """[(address, bytes, category)] of the alloc lines, in file order."""
    allocs = []
    with open(path) as labels:
        for line in labels:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "alloc":
                allocs.append((int(fields[1], 16), int(fields[2]), fields[3]))
    return allocs


def compare_label_files(a_path, b_path):
    """Agreement of two label files written from the same allocations: bytes where both know a category."""
    a, b = read_allocs(a_path), read_allocs(b_path)
    if [x[:2] for x in a] != [x[:2] for x in b]:
        raise SystemExit(f"score.py: {a_path} and {b_path} do not list the same allocations")
    both = agree = 0
    confusion = collections.Counter()
    for (_, size, ca), (_, _, cb) in zip(a, b):
        if ca != "-" and cb != "-":
            both += size
            agree += size if ca == cb else 0
            if ca != cb:
                confusion[(ca, cb)] += size
    return {"bytes_both_know": both, "agreement": agree / both if both else None,
            "disagreements": {f"{x}->{y}": n for (x, y), n in confusion.most_common()}}


# Categories the script knows every tensor of (script_truth.py): a torch.profiler claim of one of these
# for memory the script never saw in it is refuted, not replaced (the script cannot say what it was).
SCRIPT_KNOWN = {"weights", "gradients", "optimizer_state", "input"}


def write_reconciled(oracle_path, script_path, out_path, recompute_path=None):
    """torch.profiler's labels corrected by the script's knowledge (docs/tagging.md, "Who is right").

    Where the script knows the category, it wins; where torch.profiler claims a category the script
    knows every tensor of and the script did not see that tensor, the allocation becomes '-'. A
    result of the recomputed forward (recompute_path, oracle/recompute.py) that torch.profiler calls
    a temporary of the backward node is an activation. Returns {"from->to": bytes} of the changes."""
    changes = collections.Counter()
    recompute = open(recompute_path) if recompute_path and os.path.exists(recompute_path) else None
    with open(oracle_path) as oracle, open(script_path) as script, open(out_path, "w") as out:
        for o_line, s_line in zip(oracle, script):
            o, s = o_line.rstrip("\n").split("\t"), s_line.rstrip("\n").split("\t")
            r = recompute.readline().rstrip("\n").split("\t") if recompute else o
            if o[0] == "alloc":
                category = s[3] if s[3] != "-" else ("-" if o[3] in SCRIPT_KNOWN else o[3])
                if category == "workspace" and r[:3] == o[:3] and r[3] != "-":
                    category = r[3]
                if category != o[3]:
                    changes[f"{o[3]}->{category}"] += int(o[2])
                o[3] = category
            out.write("\t".join(o) + "\n")
    if recompute:
        recompute.close()
    return dict(changes.most_common())


def labels_from_trace(trace_path, uses_path, out_path):
    """Label file over the trace's own device allocations, for an allocator that told torch.profiler
    nothing (backend:cudaMallocAsync). The file at uses_path lists tensor uses (zero-length allocs
    at the storage address, at the start of the operator using it, with a category). Each use goes
    to the trace allocation at its address that is live then, else to the next one made there (an
    operator starts before the allocation it makes); an allocation takes its uses' most frequent
    category, '-' without any. The allocations come from the trace (addresses, sizes, order: facts,
    not tags)."""
    import bisect

    db = sqlite3.connect(f"file:{trace_path}?mode=ro", uri=True)
    start = db.execute("SELECT start_monotonic_ns FROM run").fetchone()[0]
    allocations = [(address, size, alloc_ns + start, (free_ns + start) if free_ns is not None else float("inf"))
                   for address, size, alloc_ns, free_ns in db.execute(
                       "SELECT address, bytes, alloc_ns, free_ns FROM allocations "
                       "WHERE kind IN ('device', 'device_async', 'device_mapped') ORDER BY alloc_ns, id")]
    at_address = collections.defaultdict(list)  # address -> [(begin, index)]
    for index, (address, _, begin, _) in enumerate(allocations):
        at_address[address].append((begin, index))
    votes = collections.defaultdict(collections.Counter)
    spans = []
    with open(uses_path) as uses:
        for line in uses:
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "span":
                spans.append((int(fields[4]), line.rstrip("\n")))
            if fields[0] != "alloc" or fields[3] == "-":
                continue
            here, t = at_address.get(int(fields[1], 16), []), int(fields[4])
            i = bisect.bisect_right(here, (t, float("inf"))) - 1
            if i >= 0 and allocations[here[i][1]][3] >= t:
                votes[here[i][1]][fields[3]] += 1
            elif i + 1 < len(here):
                votes[here[i + 1][1]][fields[3]] += 1
    lines = []
    for index, (address, size, begin, end) in enumerate(allocations):
        category = votes[index].most_common(1)[0][0] if votes[index] else "-"
        lines.append((begin, f"alloc\t{address:#x}\t{size}\t{category}\t{begin}"))
        if end != float("inf"):
            lines.append((end, f"free\t{address:#x}\t0\t-\t{end}"))
    lines.sort(key=lambda item: item[0])
    lines = sorted(lines + spans, key=lambda item: item[0])
    with open(out_path, "w") as out:
        out.writelines(text + "\n" for _, text in lines)


def label_totals(path):
    totals = collections.Counter()
    for _, size, category in read_allocs(path):
        totals[category] += size
    return dict(totals)


def tag_accuracy(tool, trace, labels):
    """tbdprof-tag-accuracy's figures: accuracy, labelled bytes, its table and notes."""
    done = subprocess.run([tool, trace, labels], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"score.py: {tool} failed on {labels}: {done.stderr.strip()}")
    found = re.search(r"^accuracy ([0-9.]+) of (\d+) labelled bytes", done.stdout, re.M)
    if not found:
        raise SystemExit(f"score.py: no accuracy line from {tool}:\n{done.stdout}")
    return {"accuracy": float(found.group(1)), "labelled_bytes": int(found.group(2)), "table": done.stdout}


def run_sample(args, workdir, oracle, script, recompute):
    labels = ["--script-notes", script] if args.profiler_off else ["--oracle-labels", oracle, "--script-labels", script,
                                                                   "--recompute-labels", recompute]
    command = [args.python, args.sample, *labels] + args.sample_args
    env = dict(os.environ)
    env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if ALLOCATORS[args.allocator]:
        env["PYTORCH_CUDA_ALLOC_CONF"] = ALLOCATORS[args.allocator]
    trace = None
    if args.tbdprof:
        trace = os.path.join(workdir, "run.sqlite")
        preset = ["--framework=pytorch"] if args.allocator == "preset" else []
        device = [] if args.real_gpu else ["--sim"]
        command = [args.tbdprof, "record", *device, "--force", "-q", *preset, "-o", trace, "--", *command,
                   "--device", "cuda"]
    else:
        command += ["--device", "cpu"]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    sys.stdout.write(done.stdout)
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])
        if "PyTorch sees no CUDA device" in done.stderr or "No module named 'torch'" in done.stderr:
            print("score.py: skipped: this PyTorch cannot run here (no torch, or no simulated CUDA device)")
            sys.exit(SKIP)
        raise SystemExit(f"score.py: the run failed (exit {done.returncode}): {' '.join(command)}")
    if not re.search(r"steps=\d+", done.stdout):
        raise SystemExit("score.py: the sample did not say how many steps it ran")
    return trace


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", required=True, help="a python that imports torch")
    parser.add_argument("--tbdprof", help="record under tbdprof --sim (else: the CPU, labels only)")
    parser.add_argument("--tag-accuracy", help="tbdprof-tag-accuracy (with --tbdprof)")
    parser.add_argument("--allocator", choices=sorted(ALLOCATORS), default="caching")
    parser.add_argument("--min", type=float, default=0.95, help="least agreement of tbdprof with torch.profiler")
    parser.add_argument("--min-script", type=float, default=0.0,
                        help="least agreement of torch.profiler with the script's own knowledge")
    parser.add_argument("--real-gpu", action="store_true",
                        help="record on the machine's real GPU (tbdprof without --sim; scripts/gpu/)")
    parser.add_argument("--profiler-off", action="store_true",
                        help="with --tbdprof: run without torch.profiler, as users do, and hold tbdprof to the "
                             "script's own notes alone (--min; train_common.py --script-notes)")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--workdir", help="keep the trace and labels here (default: a temporary folder)")
    parser.add_argument("sample")
    parser.add_argument("sample_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.tbdprof and not args.tag_accuracy:
        parser.error("--tbdprof needs --tag-accuracy")
    if args.profiler_off and not args.tbdprof:
        parser.error("--profiler-off needs --tbdprof")
    probe_env = dict(os.environ)
    if args.tbdprof and not args.real_gpu:  # torch loads the CUDA libraries at import: the simulated ones
        try:
            probe_env = with_simgpu_first(probe_env, args.tbdprof)
        except ValueError as e:
            parser.error(str(e))
    probe = subprocess.run([args.python, "-c", "import torch"], capture_output=True, env=probe_env)
    if probe.returncode != 0:
        print(f"score.py: skipped: {args.python} cannot import torch")
        return SKIP
    with tempfile.TemporaryDirectory() as scratch:
        workdir = args.workdir or scratch
        os.makedirs(workdir, exist_ok=True)
        oracle, script = os.path.join(workdir, "oracle.labels"), os.path.join(workdir, "script.labels")
        recompute = os.path.join(workdir, "recompute.labels")
        trace = run_sample(args, workdir, oracle, script, recompute)
        if args.profiler_off:
            return score_profiler_off(args, trace, script)
        if trace and not any(line.startswith("alloc") for line in open(oracle)) or (
                trace and args.allocator == "preset"):
            # The allocator told torch.profiler nothing: the labels list tensors by their uses.
            for path in (oracle, script, recompute):
                os.replace(path, path + ".tensors")
                labels_from_trace(trace, path + ".tensors", path)
        result = {"sample": os.path.basename(args.sample), "options": args.sample_args, "allocator": args.allocator,
                  "oracle_totals": label_totals(oracle), "oracle_vs_script": compare_label_files(oracle, script)}
        reconciled = os.path.join(workdir, "reconciled.labels")
        result["reconciled_changes"] = write_reconciled(oracle, script, reconciled, recompute)
        result["reconciled_totals"] = label_totals(reconciled)
        if trace:
            result["tbdprof_vs_oracle"] = tag_accuracy(args.tag_accuracy, trace, reconciled)
            result["tbdprof_vs_raw_oracle"] = tag_accuracy(args.tag_accuracy, trace, oracle)
            result["tbdprof_vs_script"] = tag_accuracy(args.tag_accuracy, trace, script)
            if os.path.exists(oracle + ".tensors"):  # no allocation events: nothing to tell PyTorch's from others'
                result["unseen_by_pytorch"] = unseen.uncategorized_by_pytorch(trace, oracle)
            else:
                result["unseen_by_pytorch"] = unseen.unseen_by_pytorch(trace, oracle)
        report(result)
        if args.json:
            with open(args.json, "w") as out:
                json.dump(result, out, indent=1)
    script_agreement = result["oracle_vs_script"]["agreement"]
    if script_agreement is None or script_agreement < args.min_script:
        print(f"score.py: FAIL: torch.profiler agrees with the script on less than {args.min_script:.2%} of the bytes")
        return REFERENCE_UNUSABLE
    if trace and result["tbdprof_vs_oracle"]["accuracy"] < args.min:
        print(f"score.py: FAIL: tbdprof agrees with torch.profiler on less than {args.min:.2%} of the bytes")
        return 1
    return 0


def score_profiler_off(args, trace, notes):
    """tbdprof's tags of a run without torch.profiler against the script's notes: each storage the
    script named, at the moment it named it. A note outside every sub-range's life ('unattributed':
    the weights noted before their first use, the state noted after the last step's last kernel)
    says nothing of the tags, so --min holds the bytes that some sub-range covered."""
    figures = tag_accuracy(args.tag_accuracy, trace, notes)
    found = re.search(r"^unattributed\s+\d+\s+(\d+)", figures["table"], re.M)
    unattributed = int(found.group(1)) if found else 0
    attributed = figures["labelled_bytes"] - unattributed
    figures["attributed_accuracy"] = figures["accuracy"] * figures["labelled_bytes"] / attributed if attributed else 0.0
    name = f"{os.path.basename(args.sample)} {' '.join(args.sample_args)} [{args.allocator}, no torch.profiler]"
    print(f"{name}: tbdprof vs script: {figures['attributed_accuracy']:.4f} of the {attributed} bytes inside "
          f"sub-ranges ({figures['accuracy']:.4f} of all {figures['labelled_bytes']})")
    print(figures["table"])
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"tbdprof_vs_script_notes": figures}, out, indent=1)
    if figures["attributed_accuracy"] < args.min:
        print(f"score.py: FAIL: tbdprof agrees with the script on less than {args.min:.2%} of the bytes")
        return 1
    return 0


def report(result):
    name = f"{result['sample']} {' '.join(result['options'])} [{result['allocator']}]"
    o = result["oracle_vs_script"]
    agreement = "n/a" if o["agreement"] is None else f"{o['agreement']:.4f}"
    print(f"{name}: torch.profiler vs script: {agreement} of {o['bytes_both_know']} bytes both know; "
          f"disagreements {o['disagreements']}")
    print(f"{name}: torch.profiler categories (bytes): {result['oracle_totals']}")
    print(f"{name}: corrected by the script: {result['reconciled_changes']}")
    for key, title in (("tbdprof_vs_oracle", "tbdprof vs torch.profiler (corrected)"),
                       ("tbdprof_vs_raw_oracle", "tbdprof vs torch.profiler (as it is)"),
                       ("tbdprof_vs_script", "tbdprof vs script")):
        if key in result:
            print(f"{name}: {title}: {result[key]['accuracy']:.4f} of {result[key]['labelled_bytes']} bytes")
            print(result[key]["table"])
    if "unseen_by_pytorch" in result:
        u = result["unseen_by_pytorch"]
        print(f"{name}: not seen by PyTorch (bytes by tbdprof's tag): made outside its allocator "
              f"{u['outside_pytorch']} (of which library workspaces {u['outside_pytorch_library_workspaces']}); "
              f"made by PyTorch, no category from its profiler: {u['uncategorized_by_pytorch']}")


# torch.profiler's labels disagreeing with the script's own: the reference failed, not tbdprof. Under
# the cudaMallocAsync backend the labels come from tensor uses matched to the trace's allocations by
# time, and one recording in a few matched badly (cnn_train.py preset: 0.88 against the script, at
# least the required 0.99 in the runs before and after); such a run is recorded once more, and fails
# if the second disagrees too.
REFERENCE_UNUSABLE = 3


def main_recording_again_once():
    code = main()
    if code == REFERENCE_UNUSABLE:
        print("score.py: the reference disagrees with the script: recording once more", flush=True)
        code = main()
    return 1 if code == REFERENCE_UNUSABLE else code


if __name__ == "__main__":
    sys.exit(main_recording_again_once())
