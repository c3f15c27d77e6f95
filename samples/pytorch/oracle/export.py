"""PyTorch's own memory categories (torch.profiler's memory profiler) as tbdprof label files.

The run was recorded by torch.profiler with CPU activities, profile_memory, record_shapes and
with_stack (what MemoryProfile needs). From it, every allocation of the profiled device: address,
bytes, host times of alloc and free (CLOCK_MONOTONIC ns, the clock of tbdprof's traces and labels),
and PyTorch's category, mapped onto ours (docs/tagging.md, "PyTorch's memory profiler as an oracle"):

    PARAMETER -> weights          OPTIMIZER_STATE -> optimizer_state   INPUT -> input
    GRADIENT -> gradients         ACTIVATION -> activations            TEMPORARY -> workspace
    AUTOGRAD_DETAIL -> activations (what backward operators pass to one another)
    no category -> '-' (PyTorch does not know: not scored, counted apart)

A tensor's category can change from one version to the next (an in-place update); the allocation
takes the category its versions held for the longest time.

This uses torch.profiler._memory_profiler, a private module (its API is PyTorch's internals and may
change between releases); the public export_memory_timeline gives only totals per category, not
which allocation had which.
"""

import collections
import time

import torch

import clock
import recompute

CATEGORY_NAMES = {
    "PARAMETER": "weights",
    "OPTIMIZER_STATE": "optimizer_state",
    "INPUT": "input",
    "GRADIENT": "gradients",
    "ACTIVATION": "activations",
    "TEMPORARY": "workspace",
    "AUTOGRAD_DETAIL": "activations",
}
UNKNOWN = "-"
CALIBRATION_EVENT = "tbdprof_clock_calibration"
CALIBRATION_TRIES = 3


class Allocation:
    """One allocation the profiler saw on the profiled device; times are CLOCK_MONOTONIC ns."""

    __slots__ = ("address", "bytes", "alloc_ns", "free_ns", "key", "oracle_category", "script_category",
                 "pytorch_category", "alloc_order", "free_order", "recompute_category")

    def __init__(self, address, size, alloc_ns, key, order):
        self.address, self.bytes, self.alloc_ns, self.free_ns, self.key = address, size, alloc_ns, None, key
        self.alloc_order, self.free_order = order, None
        self.oracle_category = self.script_category = self.recompute_category = UNKNOWN
        self.pytorch_category = None


def calibrate_profiler_clock():
    """Marks a moment in the profiler's clock and in CLOCK_MONOTONIC; call while the profiler records
    (before the model is built, at each step's start and after the last step: the marks, in order,
    go to allocations_from_profiler). Returns the mark's tries [(before, after)]: several back to
    back, so that one delayed by the host does not set the offset (clock.py)."""
    tries = []
    for _ in range(CALIBRATION_TRIES):
        before = time.monotonic_ns()
        with torch.profiler.record_function(CALIBRATION_EVENT):
            pass
        tries.append((before, time.monotonic_ns()))
    return tries


def _profiler_clock(op_tree, marks):
    """Profiler time -> CLOCK_MONOTONIC from the calibration marks: the offset interpolated between
    the marks around each time (clock.py)."""
    events = [(e.start_time_ns, e.end_time_ns) for e in op_tree.dfs() if e.name == CALIBRATION_EVENT]
    return clock.clock_from_events(events, marks)[0]


def _version_spans(profile):
    """TensorKey -> [(time, version)] from the memory profile's timeline, in time order."""
    from torch.profiler._memory_profiler import Action, TensorKey

    spans = collections.defaultdict(list)
    for t, action, (key, version), _ in profile.timeline:
        if isinstance(key, TensorKey) and action in (Action.CREATE, Action.INCREMENT_VERSION, Action.PREEXISTING):
            spans[key].append((t, version))
    return spans


def _longest_category(profile, key, versions, free_time, end_time):
    """The category the tensor's versions held longest (profiler times); None when PyTorch has none."""
    if not versions:
        return profile._categories.get(key, 0)
    held = collections.Counter()
    for i, (t, version) in enumerate(versions):
        until = versions[i + 1][0] if i + 1 < len(versions) else (free_time if free_time is not None else end_time)
        held[profile._categories.get(key, version)] += max(until - t, 0) + 1
    return max(held.items(), key=lambda item: item[1])[0]


def allocations_from_profiler(profiler, calibration_marks, device):
    """Every allocation on `device` the profiler saw, in order of allocation, with PyTorch's category."""
    from torch._C._profiler import _EventType
    from torch.profiler._memory_profiler import TensorKey

    profile = profiler._memory_profile()
    to_monotonic = _profiler_clock(profile._op_tree, calibration_marks)
    events = [e for e in profile._op_tree.dfs() if e.typed[0] == _EventType.Allocation]
    events.sort(key=lambda e: e.start_time_ns)  # stable: ties keep the tree's order (threads interleave)
    end_time = events[-1].start_time_ns if events else 0
    live, allocations, free_times = {}, [], {}
    for order, event in enumerate(events):
        fields = event.typed[1]
        if fields.device.type != device.type:
            continue
        if fields.alloc_size > 0:
            allocation = Allocation(fields.ptr, fields.alloc_size, event.start_time_ns, TensorKey.from_allocation(fields),
                                    order)
            live[fields.ptr] = allocation
            allocations.append(allocation)
        elif fields.ptr in live:  # a free of memory allocated before recording started is not ours
            allocation = live.pop(fields.ptr)
            allocation.free_ns, allocation.free_order = event.start_time_ns, order
    spans = _version_spans(profile)
    recomputed = recompute.recomputed_results(profile._op_tree)
    for allocation in allocations:
        if allocation.key in recomputed:
            allocation.recompute_category = recompute.RESULT_CATEGORY
        if allocation.key is not None:
            category = _longest_category(profile, allocation.key, spans.get(allocation.key, []), allocation.free_ns,
                                         end_time)
            allocation.pytorch_category = category.name if category else None
            allocation.oracle_category = CATEGORY_NAMES[category.name] if category else UNKNOWN
        allocation.alloc_ns = to_monotonic(allocation.alloc_ns)
        if allocation.free_ns is not None:
            allocation.free_ns = to_monotonic(allocation.free_ns)
    return allocations


def tensor_uses_from_profiler(profiler, calibration_marks, device):
    """Every use of a tensor storage on `device` by an operator, as a zero-length Allocation at the
    operator's start, with PyTorch's category of the version used.

    For an allocator that reports nothing to the profiler (backend:cudaMallocAsync: the profile then
    has no allocation events for the device), the memory profiler still categorizes the tensors it
    sees in operators; without allocation events one key may stand for several allocations at one
    address, so uses, not keys, are what score.py matches to the trace's allocations."""
    profile = profiler._memory_profile()
    to_monotonic = _profiler_clock(profile._op_tree, calibration_marks)
    uses = []
    for node in profile._data_flow_graph.flow_nodes:
        versions = {key: version for key, (_, version) in node.inputs.items()}
        versions.update(node.outputs)
        versions.update((key, 0) for key in node.intermediates)
        for key, version in versions.items():
            if key.device.type != device.type:
                continue
            t = to_monotonic(node.start_time)
            use = Allocation(key.storage.ptr, profile._size_map[key], t, key, len(uses))
            use.free_ns, use.free_order = t, len(uses)
            category = profile._categories.get(key, version)
            use.pytorch_category = category.name if category else None
            use.oracle_category = CATEGORY_NAMES[category.name] if category else UNKNOWN
            uses.append(use)
    return uses


def segments_of(device):
    """The caching allocator's segments (address, bytes), or [] when tensors are allocations of their own."""
    if device.type != "cuda" or torch.cuda.get_allocator_backend() != "native":
        return []
    return sorted((s["address"], s["total_size"]) for s in torch.cuda.memory_snapshot() if s["device"] == (
        device.index if device.index is not None else torch.cuda.current_device()))


def write_labels(path, allocations, segments, spans, category_of):
    """The label file (../shared/notes/definitions.md, "Ground-truth label files"), timed form.

    Segments first (they are held to the end of the run), then allocs, frees and training spans in
    time order (allocs and frees of one moment in the profiler's order); '-' marks an allocation whose category the labeller does not know.
    """
    first = min([a.alloc_ns for a in allocations] + [b for b, _ in spans] + [time.monotonic_ns()])
    lines = [(first - 1, -1, f"segment\t{address:#x}\t{size}\t-\t{first - 1}") for address, size in segments]
    for a in allocations:
        lines.append((a.alloc_ns, a.alloc_order, f"alloc\t{a.address:#x}\t{a.bytes}\t{category_of(a)}\t{a.alloc_ns}"))
        if a.free_ns is not None:
            lines.append((a.free_ns, a.free_order, f"free\t{a.address:#x}\t0\t-\t{a.free_ns}"))
    for index, (begin, end) in enumerate(spans):
        lines.append((end, float("inf"), f"span\ttraining\t{index}\t{begin}\t{end}"))
    lines.sort(key=lambda line: (line[0], line[1]))
    with open(path, "w") as out:
        out.writelines(text + "\n" for _, _, text in lines)
