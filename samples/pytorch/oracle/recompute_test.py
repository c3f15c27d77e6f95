"""The recomputed forward of activation checkpointing, found from the script's mark (recompute.py).

On the CPU, under torch.profiler with profile_memory: a block of two operators checkpointed
(non-reentrant) with recompute.checkpoint_contexts, then backward. torch.profiler calls every
tensor the recomputation makes a TEMPORARY of the backward node that unpacks it (workspace after
the mapping); recompute.recomputed_results must find the first operator's output (read by the second
operator, kept for backward) among them, and leave out the tensors made and freed inside one
operator of the recomputation (cosine_similarity makes such). score.write_reconciled must then turn
those workspace labels into activations and leave every other label alone. Exit 0 when all hold,
1 otherwise, 77 without PyTorch. With --tbdprof, the simulated GPU's libraries beside it come first
on the loader's path (the CUDA build of PyTorch loads its CUDA libraries when imported).

    recompute_test.py [--tbdprof TBDPROF]
"""

import os
import subprocess
import sys
import tempfile

from simgpu_libraries import with_simgpu_first

CHILD = "TBDPROF_RECOMPUTE_TEST_CHILD"
if len(sys.argv) == 3 and sys.argv[1] == "--tbdprof" and CHILD not in os.environ:
    try:
        env = with_simgpu_first(os.environ, sys.argv[2])
    except ValueError as e:
        print(f"skipped: {e}")
        sys.exit(77)
    env[CHILD] = "1"
    sys.exit(subprocess.run([sys.executable, os.path.abspath(__file__)], env=env).returncode)

try:
    import torch
except ImportError as e:
    print(f"skipped: no PyTorch ({e})")
    sys.exit(77)

import recompute
import score

ROWS, WIDTH = 64, 128
BYTES = ROWS * WIDTH * 4


def run():
    """Profiles one checkpointed step; returns (memory profile, recomputed result keys)."""
    torch.manual_seed(0)
    weight = torch.randn(WIDTH, WIDTH, requires_grad=True)
    x = torch.randn(ROWS, WIDTH)

    def block(t):
        # cosine_similarity (one operator) makes products of the size of its inputs and sums them
        # within itself: its temporaries; the GEMM's product is read by it and kept for backward.
        return torch.nn.functional.cosine_similarity(t @ weight, t, dim=1)

    # The whole block recomputed (no early stop), so that its operator with a temporary runs again.
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True,
                                record_shapes=True, with_stack=True) as profiler, \
            torch.utils.checkpoint.set_checkpoint_early_stop(False):
        out = torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False,
                                                context_fn=recompute.checkpoint_contexts)
        out.sum().backward()
    profile = profiler._memory_profile()
    return profile, recompute.recomputed_results(profile._op_tree)


def category(profile, key):
    found = profile._categories.get(key, 0)
    return found.name if found else None


def check_reconciled(failures):
    """write_reconciled: a recomputed result labelled workspace becomes activations, nothing else moves."""
    oracle = ["alloc\t0x1000\t64\tworkspace\t1", "alloc\t0x2000\t64\tworkspace\t2",
              "alloc\t0x3000\t64\tgradients\t3", "free\t0x1000\t0\t-\t4"]
    script = ["alloc\t0x1000\t64\t-\t1", "alloc\t0x2000\t64\t-\t2", "alloc\t0x3000\t64\tgradients\t3",
              "free\t0x1000\t0\t-\t4"]
    marks = ["alloc\t0x1000\t64\tactivations\t1", "alloc\t0x2000\t64\t-\t2", "alloc\t0x3000\t64\tactivations\t3",
             "free\t0x1000\t0\t-\t4"]
    with tempfile.TemporaryDirectory() as work:
        paths = [os.path.join(work, name) for name in ("oracle", "script", "recompute", "out")]
        for path, lines in zip(paths, (oracle, script, marks)):
            with open(path, "w") as out:
                out.write("\n".join(lines) + "\n")
        changes = score.write_reconciled(paths[0], paths[1], paths[3], paths[2])
        with open(paths[3]) as reconciled:
            got = [line.split("\t")[3] for line in reconciled if line.startswith("alloc")]
    if got != ["activations", "workspace", "gradients"] or changes != {"workspace->activations": 64}:
        failures.append(f"write_reconciled gave {got} with changes {changes}")


def main():
    profile, results = run()
    failures = []
    sizes = sorted(profile._size_map[key] for key in results)
    print(f"recomputed results: {len(results)} tensors, bytes {sizes}; torch.profiler's categories: "
          f"{sorted({str(category(profile, key)) for key in results})}")
    if "TEMPORARY" not in {category(profile, key) for key in results}:
        failures.append("no recomputed result was a TEMPORARY to torch.profiler (nothing to correct)")
    # Made in the recomputation at the block's size, in order: the GEMM's product first (a result),
    # then cosine_similarity's (its product of the two inputs is made and freed inside it).
    from torch._C._profiler import _EventType
    from torch.profiler._memory_profiler import TensorKey

    events = sorted(profile._op_tree.dfs(), key=lambda e: e.start_time_ns)
    made = [TensorKey.from_allocation(e.typed[1]) for mark in events if mark.name == recompute.RECOMPUTE_EVENT
            for e in events if e.typed[0] == _EventType.Allocation and e.typed[1].alloc_size == BYTES
            and recompute._in_window(mark, e)]
    print(f"made in the recomputation at {BYTES} B: {len(made)}, results among them: "
          f"{[key in results for key in made]}")
    if not made or made[0] not in results:
        failures.append("the GEMM's recomputed product (read by the next operator) is no result")
    if made and all(key in results for key in made):
        failures.append("a temporary made and freed inside one recomputed operator was taken for a result")
    check_reconciled(failures)
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
