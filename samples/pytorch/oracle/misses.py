#!/usr/bin/env python3
"""Where tbdprof's pooled tags and a label file disagree, tensor by tensor.

    misses.py TRACE.sqlite LABELS [--script SCRIPT_LABELS] [--top N] [--json FILE]

Replays tbdprof-tag-accuracy's matching of tensors inside pool segments (tagger/tools/accuracy_pool.cpp:
each labelled byte takes the category of the sub-range covering it in the tensor's life, one used in a
labelled training step first, then the one whose life matches the tensor's best) and breaks the
disagreeing bytes down: by (label, tbdprof) category, by the rule of the sub-range that decided, by
labelled step, by whether the segment was scored by sub-ranges or as a whole, and by the work that
used the tensor's start address while it lived. With --script, each missed tensor also says what the
script knew of it (script_truth.py's category, '-' when it knows nothing). Prints the largest groups
and the largest missed tensors; a diagnosis aid, not a test.
"""

import argparse
import bisect
import collections
import json
import sqlite3


def read_labels(path):
    """(pooled labels, training spans): each label {address, bytes, category, from, to, index} on the
    labels' clock, as accuracy.cpp collects them (segments the labels open; frees close tensors)."""
    segments, live, pooled, spans = {}, {}, [], []
    with open(path) as labels:
        for index, line in enumerate(labels):
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 4:
                continue
            event = fields[0]
            if event == "span":
                if fields[1] == "training":
                    spans.append((int(fields[3]), int(fields[4])))
                continue
            address, size = int(fields[1], 16), int(fields[2])
            when = int(fields[4]) if len(fields) > 4 else 0
            if event == "segment":
                segments[address] = size
            elif event == "segment_free":
                segments.pop(address, None)
            elif event == "free" and address in live:
                pooled[live.pop(address)]["to"] = when
            elif event == "alloc" and fields[3] != "-":
                if any(s <= address < s + n for s, n in segments.items()):
                    live[address] = len(pooled)
                    pooled.append({"address": address, "bytes": size, "category": fields[3], "from": when,
                                   "to": None, "line": index})
    return pooled, spans


class Trace:
    def __init__(self, path):
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self.start = self.db.execute("SELECT start_monotonic_ns FROM run").fetchone()[0]
        self.segments = list(self.db.execute(
            "SELECT a.id, a.address, a.bytes, a.alloc_ns, coalesce(a.free_ns, 1 << 62), "
            "coalesce(c.category, 'untagged') FROM allocations a LEFT JOIN allocation_categories c "
            "ON c.allocation = a.id WHERE a.kind IN ('device', 'device_async', 'managed', 'device_mapped') "
            "ORDER BY a.id"))
        self.subs = collections.defaultdict(list)
        for sid, alloc, offset, size, begin, end, category, rule in self.db.execute(
                "SELECT id, allocation, offset, bytes, begin_ns, end_ns, category, coalesce(rule, '') "
                "FROM allocation_subranges"):
            self.subs[alloc].append({"id": sid, "offset": offset, "bytes": size, "begin": begin, "end": end,
                                     "category": category, "rule": rule})
        self._uses = None

    def holding(self, address, t_from, t_to):
        for seg in self.segments:
            if seg[1] <= address < seg[1] + max(seg[2], 1) and seg[3] <= t_from <= seg[4]:
                return seg
        found = None
        for seg in self.segments:
            if seg[1] <= address < seg[1] + max(seg[2], 1) and t_from < seg[3] <= t_to:
                if found is None or seg[3] < found[3]:
                    found = seg
        return found

    def uses(self):
        """Per (segment, offset): sorted [(launch_ns, what)] of the work that pointed there."""
        if self._uses is not None:
            return self._uses
        uses = collections.defaultdict(list)
        for alloc, offset, launch, name, ro in self.db.execute(
                "SELECT ka.allocation, ka.offset, k.start_ns - coalesce(k.queued_ns, 0), s.text, ka.read_only "
                "FROM kernel_allocations ka JOIN kernels k ON k.id = ka.kernel JOIN functions f ON "
                "f.id = k.function JOIN strings s ON s.id = f.name"):
            uses[(alloc, offset)].append((launch, short(name) + (" [ro]" if ro else "")))
        for kind, size, src, dst, sa, da, launch in self.db.execute(
                "SELECT kind, bytes, src, dst, src_allocation, dst_allocation, start_ns - coalesce(queued_ns, 0) "
                "FROM copies WHERE kind = 'dtod' OR kind = 'htod' OR kind = 'dtoh'"):
            for alloc, pointer, role in ((sa, src, "src"), (da, dst, "dst")):
                if alloc is not None:
                    base = self.address_of(alloc)
                    uses[(alloc, pointer - base)].append((launch, f"copy {kind} {role} {size}"))
        for launch, size, alloc, pointer in self.db.execute(
                "SELECT start_ns - coalesce(queued_ns, 0), bytes, dst_allocation, dst FROM sets "
                "WHERE dst_allocation IS NOT NULL"):
            uses[(alloc, pointer - self.address_of(alloc))].append((launch, f"set {size}"))
        for row in self.db.execute(
                "SELECT begin_ns, name, a, a_allocation, b, b_allocation, c, c_allocation, workspace, "
                "workspace_allocation, workspace_bytes FROM library_calls"):
            launch, name = row[0], row[1]
            for role, (pointer, alloc) in zip("abcw", zip(row[2:10:2], row[3:10:2])):
                if alloc is not None and pointer is not None:
                    uses[(alloc, pointer - self.address_of(alloc))].append((launch, f"{name} {role}"))
        for value in uses.values():
            value.sort()
        self._uses = uses
        return uses

    def address_of(self, alloc):
        if not hasattr(self, "_address"):
            self._address = {seg[0]: seg[1] for seg in self.segments}
        return self._address.get(alloc, 0)


def short(name):
    name = name.split("(")[0]
    for cut in ("void ", "at::native::"):
        name = name.replace(cut, "")
    return name[:70]


def in_a_step(steps, a_from, a_to, b_from, b_to):
    lo, hi = max(a_from, b_from), min(a_to, b_to)
    return any(s <= hi and e >= lo for s, e in steps)


def attribute(subs, lo, hi, t_from, t_to, steps):
    """[(bytes, sub or None)] as accuracy_pool.cpp's attribute()."""
    candidates, cuts = [], {lo, hi}
    for s in subs:
        if s["offset"] >= hi or s["offset"] + s["bytes"] <= lo or s["begin"] > t_to or s["end"] < t_from:
            continue
        candidates.append(s)
        cuts.add(min(max(s["offset"], lo), hi))
        cuts.add(min(max(s["offset"] + s["bytes"], lo), hi))
    cuts = sorted(cuts)
    pieces = []
    for a, b in zip(cuts, cuts[1:]):
        best, best_in_step, best_match = None, False, -1.0
        for s in candidates:
            if s["offset"] > a or s["offset"] + s["bytes"] < b:
                continue
            step = in_a_step(steps, s["begin"], s["end"], t_from, t_to)
            overlap = min(s["end"], t_to) - max(s["begin"], t_from) + 1
            both = max(s["end"], t_to) - min(s["begin"], t_from) + 1
            match = overlap / both
            if best is None or (step and not best_in_step) or (step == best_in_step and match > best_match):
                best, best_in_step, best_match = s, step, match
        pieces.append((b - a, best))
    return pieces


def script_categories(path):
    """{label line index: script's category} (script labels list the same allocations line by line)."""
    result = {}
    with open(path) as labels:
        for index, line in enumerate(labels):
            fields = line.rstrip("\n").split("\t")
            if fields[0] == "alloc":
                result[index] = fields[3]
    return result


def analyse(trace_path, labels_path, script_path=None):
    trace = Trace(trace_path)
    labels, spans = read_labels(labels_path)
    script = script_categories(script_path) if script_path else {}
    steps = [(b - trace.start, e - trace.start) for b, e in spans]
    step_begins = [b for b, _ in steps]
    far = 1 << 62
    tensors = []
    for label in labels:
        t_from = label["from"] - trace.start
        t_to = far if label["to"] is None else label["to"] - trace.start
        seg = trace.holding(label["address"], t_from, t_to)
        entry = {"label": label, "from": t_from, "to": t_to, "step": bisect.bisect_right(step_begins, t_from) - 1,
                 "script": script.get(label["line"], "?"), "pieces": []}
        if seg is None:
            entry["pieces"].append((label["bytes"], "unmatched", "", None))
        else:
            entry["segment"], entry["offset"] = seg[0], label["address"] - seg[1]
            address, label_end = label["address"], label["address"] + label["bytes"]
            while address < label_end:  # a tensor may run on into the next mapping (expandable segments)
                seg_end = seg[1] + max(seg[2], 1)
                following = trace.holding(seg_end, t_from, t_to) if label_end > seg_end else None
                end = seg_end if following else label_end
                lo, hi = address - seg[1], end - seg[1]
                subs = trace.subs.get(seg[0])
                if subs is None:
                    entry["pieces"].append((hi - lo, seg[5], "(whole segment)", None))
                else:
                    for size, sub in attribute(subs, lo, hi, t_from, t_to, steps):
                        entry["pieces"].append((size, sub["category"] if sub else "unattributed",
                                                sub["rule"] if sub else "", sub))
                address, seg = end, following
        tensors.append(entry)
    return trace, tensors


def report(trace, tensors, top):
    total = sum(t["label"]["bytes"] for t in tensors)
    wrong = collections.Counter()
    by_rule = collections.Counter()
    by_step = collections.Counter()
    by_size = collections.Counter()
    by_script = collections.Counter()
    misses = []
    for t in tensors:
        truth = t["label"]["category"]
        missed = 0
        for size, category, rule, sub in t["pieces"]:
            if category == truth:
                continue
            missed += size
            wrong[(truth, category)] += size
            by_rule[(truth, category, rule)] += size
            by_step[t["step"]] += size
            by_size[(truth, category, t["label"]["bytes"])] += size
            by_script[(t["script"], truth, category)] += size
        if missed:
            misses.append((missed, t))
    right = total - sum(wrong.values())
    print(f"labelled {total} bytes, right {right} ({right / total:.4%}), wrong {total - right}")
    sections = (("by (label, tbdprof)", wrong), ("by (label, tbdprof, rule)", by_rule),
                ("by labelled step (-1: before the first)", by_step), ("by (label, tbdprof, tensor bytes)", by_size),
                ("by (script, label, tbdprof)", by_script))
    for title, counter in sections:
        print(f"\n{title}:")
        for key, size in counter.most_common(top):
            print(f"  {size:>12,}  {key}")
    print(f"\nlargest missed tensors (of {len(misses)}):")
    uses = trace.uses()
    misses.sort(key=lambda item: -item[0])
    for missed, t in misses[:top]:
        label = t["label"]
        print(f"  {missed:>10,} of {label['bytes']:>9,} {label['category']:<15} script {t['script']:<15} step "
              f"{t['step']} seg {t.get('segment')} +{t.get('offset')} life {t['from']}..{t['to']}")
        for size, category, rule, sub in t["pieces"]:
            where = f"sub {sub['id']} +{sub['offset']} {sub['bytes']} B {sub['begin']}..{sub['end']}" if sub else ""
            print(f"      {size:>10,} -> {category:<15} {rule:<34} {where}")
        at = uses.get((t.get("segment"), t.get("offset")), [])
        lo = bisect.bisect_left(at, (t["from"] - 50_000, ""))
        shown = [f"{w[0] - t['from']:+d} {w[1]}" for w in at[lo:] if w[0] <= min(t["to"], t["from"] + 10**9) + 50_000]
        for line in shown[:12]:
            print(f"        {line}")
        if len(shown) > 12:
            print(f"        ... {len(shown) - 12} more")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("labels")
    parser.add_argument("--script", help="the script's label file (script_truth.py), line for line with LABELS")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--json", help="write every tensor's pieces here")
    args = parser.parse_args()
    trace, tensors = analyse(args.trace, args.labels, args.script)
    report(trace, tensors, args.top)
    if args.json:
        with open(args.json, "w") as out:
            json.dump([{**t, "pieces": [(s, c, r, sub["id"] if sub else None) for s, c, r, sub in t["pieces"]]}
                       for t in tensors], out)


if __name__ == "__main__":
    main()
