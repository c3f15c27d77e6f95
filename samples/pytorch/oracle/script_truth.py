"""The second opinion: categories from what the training script itself knows, not from torch.profiler.

During the run the script notes the storage address of every tensor it can name, with the moment
(CLOCK_MONOTONIC ns): model.parameters() and model.buffers() (weights: definitions.md counts model
state such as batch-norm running statistics as weights), each parameter's .grad after backward
(gradients), every tensor in optimizer.state after the step (optimizer_state), and each batch moved
to the device (input). An allocation takes the category of a tensor noted at its address while it
was live. The script cannot name activations, workspaces or temporaries: those allocations stay '-'
(not scored). The allocations themselves (addresses, sizes, order) are the ones the profiler saw.
"""

import collections
import time

import torch


class ScriptTruth:
    def __init__(self, device):
        self.device = device
        self.notes = collections.defaultdict(list)  # storage address -> [(monotonic ns, category)]
        self.conflicts = 0  # allocations the script saw under two categories
        self.noted = []  # (storage address, bytes, monotonic ns, category): for as_notes, without the profiler

    def _note(self, tensor, category):
        if isinstance(tensor, torch.Tensor) and tensor.device.type == self.device.type:
            storage, now_ns = tensor.untyped_storage(), time.monotonic_ns()
            self.notes[storage.data_ptr()].append((now_ns, category))
            self.noted.append((storage.data_ptr(), storage.nbytes(), now_ns, category))

    def note_model(self, model):
        for p in model.parameters():
            self._note(p, "weights")
        for b in model.buffers():
            self._note(b, "weights")

    def note_inputs(self, *batch):
        for t in batch:
            self._note(t, "input")

    def note_gradients(self, model):
        for p in model.parameters():
            self._note(p.grad, "gradients")

    def note_optimizer(self, optimizer):
        # ZeroRedundancyOptimizer keeps its rank's shard of the state in its local optimizer (.optim).
        optimizer = getattr(optimizer, "optim", optimizer)
        for state in optimizer.state.values():
            for value in state.values():
                self._note(value, "optimizer_state")

    def as_uses(self, make_use):
        """The notes as zero-length uses (make_use(address, time_ns, order) -> Allocation), for
        allocations only the trace knows (score.py, labels_from_trace)."""
        uses = []
        for address, notes in self.notes.items():
            for t, category in notes:
                use = make_use(address, t, len(uses))
                use.script_category = category
                uses.append(use)
        return sorted(uses, key=lambda u: u.alloc_ns)

    def as_notes(self, make_allocation):
        """The notes as allocations that live for the instant of the note, whole storages
        (make_allocation(address, bytes, time_ns, order) -> Allocation): the script's truth of a run
        without torch.profiler, scored against the trace's sub-ranges live at that instant."""
        allocations = []
        for address, size, t, category in self.noted:
            a = make_allocation(address, size, t, len(allocations))
            a.script_category = category
            a.free_ns, a.free_order = t, a.alloc_order
            allocations.append(a)
        return allocations

    def categorize(self, allocations):
        """Sets each allocation's script_category from the notes made at its address while it lived."""
        for a in allocations:
            end = a.free_ns if a.free_ns is not None else float("inf")
            seen = {category for t, category in self.notes.get(a.address, ()) if a.alloc_ns <= t <= end}
            if len(seen) > 1:
                self.conflicts += 1
            if len(seen) == 1:
                a.script_category = seen.pop()
