"""What the PyTorch training samples share: options, the training loop, and the two label files.

Every sample trains a small model in the style PyTorch users write (nn.Module, an optimizer from
torch.optim, zero_grad / backward / step), with variants chosen by options: the optimizer, bf16
autocast, gradient accumulation, activation checkpointing and gradient clipping. The allocator is
PyTorch's business: PYTORCH_CUDA_ALLOC_CONF chooses the caching allocator (default), expandable
segments, or the cudaMallocAsync backend (what `tbdprof --framework=pytorch` sets).

Simulated kernels compute nothing (values may be NaN), so nothing here looks at a tensor's values:
no early stopping, no GradScaler; every run does exactly --steps optimizer steps and says so.

Labels (docs/tagging.md, "PyTorch"): with --oracle-labels the run is recorded by torch.profiler
(CPU activities, profile_memory, record_shapes, with_stack) and oracle/export.py writes PyTorch's
category of every allocation; with --script-labels the same allocations get the category the script
itself knows (oracle/script_truth.py): parameters, their .grad, optimizer.state, the batches.
"""

import argparse
import contextlib
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle"))
import recompute  # noqa: E402 (oracle/, on sys.path above)


def parse_options(name, description, defaults, extra=None):
    """The options every sample takes; `extra(parser)` adds the sample's own. Bad options: exit 2."""
    parser = argparse.ArgumentParser(prog=name, description=description)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                        help="cpu or cuda (default: cuda when PyTorch sees a GPU)")
    parser.add_argument("--steps", type=int, default=4, help="optimizer steps (default 4)")
    parser.add_argument("--batch", type=int, default=defaults["batch"], help="samples per micro-batch")
    parser.add_argument("--optimizer", choices=["sgd", "adam", "adamw"], default=defaults["optimizer"],
                        help="sgd is SGD with momentum 0.9")
    parser.add_argument("--bf16", action="store_true", help="forward and loss under torch.autocast(bfloat16)")
    parser.add_argument("--accumulate", type=int, default=1, help="micro-batches per optimizer step")
    parser.add_argument("--checkpoint", action="store_true",
                        help="activation checkpointing of every block (torch.utils.checkpoint)")
    parser.add_argument("--clip", type=float, default=defaults.get("clip", 0.0),
                        help="clip the gradients' total norm to this (0: no clipping)")
    parser.add_argument("--profile-schedule", action="store_true",
                        help="with --oracle-labels: a torch.profiler schedule, one ProfilerStep#N per step")
    parser.add_argument("--oracle-labels", metavar="PATH", help="write torch.profiler's categories here")
    parser.add_argument("--script-labels", metavar="PATH", help="write the script's own categories here")
    parser.add_argument("--recompute-labels", metavar="PATH",
                        help="with --checkpoint: the results of the recomputed forward that torch.profiler "
                             "saw, from the script's mark of the recomputation (oracle/recompute.py)")
    parser.add_argument("--script-notes", metavar="PATH",
                        help="without torch.profiler: write the script's own categories of the storages it "
                             "can name, each at the moment it was noted (score_notes.py)")
    parser.add_argument("--phases", metavar="PATH",
                        help="write each step's phase starts here (host CLOCK_MONOTONIC ns, the trace's clock): "
                             "step, forward, backward, optimizer, end; the truth the tagger's phases are checked against")
    parser.add_argument("--profiler-trace", metavar="PATH",
                        help="record under torch.profiler and write its trace (Chrome JSON) here")
    if extra:
        extra(parser)
    args = parser.parse_args()
    for option in ("steps", "batch", "accumulate"):
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be at least 1")
    if args.clip < 0:
        parser.error("--clip must not be negative")
    if args.device not in ("cpu", "cuda") and not args.device.startswith("cuda:"):
        parser.error(f"--device must be cpu or cuda, not {args.device}")
    if args.device != "cpu" and not torch.cuda.is_available():
        parser.error("--device cuda: PyTorch sees no CUDA device")
    if args.profile_schedule and not (args.oracle_labels or args.script_labels or args.profiler_trace):
        parser.error("--profile-schedule needs --oracle-labels, --script-labels or --profiler-trace")
    return args


def make_optimizer(args, model):
    if args.optimizer == "sgd":
        return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    if args.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=1e-3)
    return torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)


def maybe_checkpoint(args, block, x):
    """Runs `block(x)`, under activation checkpointing when asked (non-reentrant, as recommended)."""
    if args.checkpoint and torch.is_grad_enabled():
        # The second context marks the recomputation in backward (oracle/recompute.py): what the
        # script knows of it corrects torch.profiler's labels there (score.py).
        return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False,
                                                 context_fn=recompute.checkpoint_contexts)
    return block(x)


def _synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class _Recording:
    """torch.profiler around the run when labels are asked for; `step()` ends a ProfilerStep."""

    def __init__(self, args):
        self.args = args
        self.profiler = None
        if not (args.oracle_labels or args.script_labels or args.recompute_labels or args.profiler_trace):
            return
        schedule = None
        if args.profile_schedule:
            # Recording from the first step on (the model is built inside it): the memory profiler
            # needs every allocation, and one whole training step at least.
            schedule = torch.profiler.schedule(wait=0, warmup=0, active=args.steps + 1, repeat=1)
        self.profiler = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
            with_stack=True, schedule=schedule)

    def __enter__(self):
        if self.profiler:
            self.profiler.__enter__()
        return self

    def __exit__(self, *exc):
        if self.profiler:
            self.profiler.__exit__(*exc)
        return False

    def step(self):
        if self.profiler and self.args.profile_schedule:
            self.profiler.step()


def train(name, args, build_model, make_batch, loss_fn, optimizer_for=make_optimizer):
    """Builds the model on args.device and runs args.steps optimizer steps; writes the labels asked for.

    build_model(args) -> nn.Module (on the CPU); make_batch(args, generator) -> (x, y) on the CPU;
    loss_fn(output, y) -> scalar loss; optimizer_for(args, model) -> the optimizer (make_optimizer's
    by default; ddp_train.py wraps it in ZeroRedundancyOptimizer).
    """
    import export  # oracle/, on sys.path above
    import script_truth

    device = torch.device(args.device)
    truth = script_truth.ScriptTruth(device)
    generator = torch.Generator().manual_seed(0)
    spans = []
    phases = []  # per step: (forward, backward, optimizer) host start times, first micro-batch's
    autocast = (lambda: torch.autocast(device.type, dtype=torch.bfloat16)) if args.bf16 else contextlib.nullcontext
    with _Recording(args) as recording:
        calibration = [export.calibrate_profiler_clock()] if recording.profiler else None
        torch.manual_seed(0)
        model = build_model(args).to(device)
        optimizer = optimizer_for(args, model)
        truth.note_model(model)
        loop_start = time.monotonic()
        for step in range(args.steps):
            begin_ns = time.monotonic_ns()
            if recording.profiler:
                calibration.append(export.calibrate_profiler_clock())
            optimizer.zero_grad(set_to_none=True)
            marks = []
            for _ in range(args.accumulate):
                x, y = make_batch(args, generator)
                x, y = x.to(device), y.to(device)
                truth.note_inputs(x, y)
                marks.append(time.monotonic_ns())
                with autocast():
                    loss = loss_fn(model(x), y) / args.accumulate
                marks.append(time.monotonic_ns())
                loss.backward()
                del x, y, loss
            truth.note_gradients(model)
            # clip_grad_norm_ belongs to the optimizer phase (as PyTorch's profiler and the tagger count it)
            phases.append((marks[0], marks[1], time.monotonic_ns()))
            if args.clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            optimizer.step()
            truth.note_model(model)
            truth.note_optimizer(optimizer)
            _synchronize(device)  # as loss.item() would, without looking at the value
            spans.append((begin_ns, time.monotonic_ns()))
            recording.step()
        elapsed_ms = (time.monotonic() - loop_start) * 1e3
        if recording.profiler:  # the last step's times lie between two marks too (oracle/clock.py)
            calibration.append(export.calibrate_profiler_clock())
    if args.script_notes:
        allocations = truth.as_notes(lambda address, size, t, order: export.Allocation(address, size, t, None, order))
        export.write_labels(args.script_notes, allocations, export.segments_of(device), spans,
                            lambda a: a.script_category)
    if args.phases:
        _write_phases(args.phases, phases, spans)
    if args.profiler_trace:
        recording.profiler.export_chrome_trace(args.profiler_trace)
    if args.oracle_labels or args.script_labels or args.recompute_labels:
        allocations = export.allocations_from_profiler(recording.profiler, calibration, device)
        segments = export.segments_of(device)
        script_allocations = allocations
        if not allocations and device.type == "cuda":  # backend:cudaMallocAsync reports no allocations
            allocations = export.tensor_uses_from_profiler(recording.profiler, calibration, device)
            script_allocations = truth.as_uses(lambda address, t, order: export.Allocation(address, 1, t, None, order))
            for use in script_allocations:
                use.free_ns, use.free_order = use.alloc_ns, use.alloc_order
            print(f"{name}: the allocator reported no allocations to torch.profiler: the labels list tensor "
                  "uses (score.py matches them to the trace's allocations)", flush=True)
        else:
            truth.categorize(allocations)
        if args.oracle_labels:
            export.write_labels(args.oracle_labels, allocations, segments, spans,
                                lambda a: a.oracle_category)
        if args.script_labels:
            export.write_labels(args.script_labels, script_allocations, segments, spans,
                                lambda a: a.script_category)
        if args.recompute_labels:
            export.write_labels(args.recompute_labels, allocations, segments, spans,
                                lambda a: a.recompute_category)
    print(f"{name}: steps={args.steps} device={device.type} allocator={allocator_name(device)} "
          f"elapsed_ms={elapsed_ms:.1f}", flush=True)


def _write_phases(path, phases, spans):
    """One line per step: index, then the host start of its forward (the first micro-batch's model
    call), backward (its loss.backward()), optimizer (gradient clipping or optimizer.step()) and the
    step's end, tab-separated CLOCK_MONOTONIC ns. The script's own marks: each lies just before the
    phase's first launch (the Python between a mark and the first kernel is the error it carries)."""
    with open(path, "w") as out:
        for index, ((forward, backward, optimizer), (_, end)) in enumerate(zip(phases, spans)):
            out.write(f"{index}\t{forward}\t{backward}\t{optimizer}\t{end}\n")


def allocator_name(device):
    if device.type != "cuda":
        return "cpu"
    backend = torch.cuda.get_allocator_backend()
    if backend == "native" and "expandable_segments:true" in os.environ.get(
            "PYTORCH_CUDA_ALLOC_CONF", "").replace(" ", "").lower():
        return "native-expandable"
    return backend
