"""The recomputed forward of activation checkpointing, from the script's own marks.

Non-reentrant `torch.utils.checkpoint` runs a block's forward a second time inside backward, when
a backward node first unpacks a tensor the block saved. torch.profiler's memory profiler takes the
topmost operators as its operations, and the backward node is one of them, so every tensor the
recomputation makes and frees inside that node is an intermediate of one operation: `TEMPORARY`
(workspace). But the recomputed forward is several operators (a convolution, a batch norm, a ReLU),
each result read by the next one or kept for the backward kernels: by
../shared/notes/definitions.md ("written by one operation and read by another, within the
iteration") those are activations, as the same results are in the first forward.

The script knows where it recomputes: the checkpoint's `context_fn` (PyTorch's documented hook: the
second context manager wraps the recomputation) opens a `record_function` range named
RECOMPUTE_EVENT there. Inside that range this module applies the profiler's own rule for
temporaries one level down: the operations are the topmost operators inside the range that match a
schema (as `DataFlowGraph._extract_leaf_events` picks them at the top); a tensor allocated and freed
inside one of them stays a temporary (the packed copies of an attention, a library's scratch); any
other tensor allocated in the range is a result of the recomputed forward.
"""

import contextlib

import torch

RECOMPUTE_EVENT = "tbdprof_checkpoint_recompute"
RESULT_CATEGORY = "activations"


def checkpoint_contexts():
    """context_fn for torch.utils.checkpoint: nothing around the forward, the mark around the
    recomputation (a fresh pair per call, as the API asks)."""
    return contextlib.nullcontext(), torch.profiler.record_function(RECOMPUTE_EVENT)


def _is_operation(event):
    """A topmost operator the memory profiler would make a node of (its leaf_op test)."""
    from torch._C._profiler import _EventType, RecordScope
    from torch.profiler._memory_profiler import SchemaMatcher

    return event.typed[0] == _EventType.TorchOp and (
        event.typed[1].scope == RecordScope.BACKWARD_FUNCTION or bool(SchemaMatcher.match_schemas(event.typed[1])))


def _in_window(mark, event):
    """Whether event began on mark's thread while mark was open. The op tree nests a recomputation
    under the Python frames that called it, and an operator's own Python code (a custom operator)
    beside it, so what lies inside what is told by thread and time, not by the tree."""
    return event.start_tid == mark.start_tid and mark.start_time_ns <= event.start_time_ns <= mark.end_time_ns


def _operations_in(window):
    """The topmost operators among `window` (events in start order): the recomputed forward's
    operations, each not inside another's time on the thread. The backward node around the mark
    began before it, so it is none of them."""
    operations = []
    for event in window:
        if _is_operation(event) and not (operations and event.start_time_ns <= operations[-1].end_time_ns):
            operations.append(event)
    return operations


def recomputed_results(op_tree):
    """TensorKeys of the tensors the recomputed forward made that outlive the operator making them."""
    from torch._C._profiler import _EventType
    from torch.profiler._memory_profiler import TensorKey

    events = sorted(op_tree.dfs(), key=lambda e: e.start_time_ns)
    results = set()
    for mark in (e for e in events if e.name == RECOMPUTE_EVENT):
        window = [e for e in events if e is not mark and _in_window(mark, e)]
        allocations = [(e, TensorKey.from_allocation(e.typed[1])) for e in window
                       if e.typed[0] == _EventType.Allocation]
        made = {key for e, key in allocations if e.typed[1].alloc_size > 0}
        for operation in _operations_in(window):
            inside = [(e, key) for e, key in allocations
                      if operation.start_time_ns <= e.start_time_ns <= operation.end_time_ns]
            freed = {key for e, key in inside if e.typed[1].alloc_size < 0}
            made -= {key for e, key in inside if e.typed[1].alloc_size > 0 and key in freed}
        results |= made - {None}
    return results
