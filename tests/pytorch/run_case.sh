#!/usr/bin/env bash
# One PyTorch check on the simulated GPU: run_case.sh CASE, with TBDPROF (the executable) and
# TBDPROF_SIMGPU_DIR (the simulated libraries) from ctest. PyTorch comes from the venv that
# scripts/torch-venv.sh installs (scripts/test.sh runs it); TBDPROF_TORCH_PYTHON names another python.
#   import       import, device query, an allocation; no real NVIDIA library mapped (/proc/self/maps)
#   mlp | cnn | transformer   a smoke training script under tbdprof --sim: a trace with kernels,
#                allocations and the library calls the model makes
#                (cnn: every cudnnBackendExecute with FLOPs, equal to the truth's convolution kernels')
#   sdpa         F.scaled_dot_product_attention forced onto cuDNN (causal BF16, FP16 with dropout;
#                forward and backward): the simulated cuDNN's fused attention kernels run inside
#                cudnnBackendExecute, recorded with FLOPs (the attention calls' equal to the truth's)
#   graph        an MLP captured with torch.cuda.graph (cudaMallocAsync backend: captured allocations
#                become graph memory nodes) and replayed 5 times: the script completes, the trace
#                has one graph_launches row per replay and the kernels of every replay (as many as
#                the truth's replayed kernels), and each replay allocated and freed its graph memory
#   ddp          samples/pytorch/ddp_train.py, unmodified, under torchrun on 2 ranks (tbdprof --sim --
#                python -m torch.distributed.run --nproc-per-node 2, TBDSIM_DEVICE_COUNT=2): one trace
#                with a process per rank (ranks 0 and 1, world size 2), the collectives moved data
#                (the script's all-reduce check; equal parameters after DDP's broadcast), every NCCL
#                call of the truth recorded once per rank, the report's communication section over
#                2 ranks, and only simulated NVIDIA libraries mapped in either rank; with no NVTX
#                step ranges, all 4 steps found on each rank (DDP's first one too, beginning with its
#                batch), its parameters tagged weights, its momentum optimizer_state, its reduced
#                gradient buckets of all 4 steps (the first step's one bucket of the whole model too)
#                gradients and the .grad they are copied back
#                into gradients too (check_ddp_gradients); each rank's own memory peak
#                (the report's memory.processes) holds its parameters as weights (check_ddp_memory).
#                A failed all-reduce check shows the values compared.
#   expandable | caching      the MLP with PyTorch's own caching allocator (expandable segments, or
#                the default), not the cudaMallocAsync of --framework=pytorch
# Exit 77 (skipped) with the reason when PyTorch or a simulated library it needs is absent.
set -uo pipefail
: "${TBDPROF:?set by ctest}" "${TBDPROF_SIMGPU_DIR:?set by ctest}"
case_name=${1:?usage: run_case.sh CASE}
here=$(cd "$(dirname "$0")" && pwd)
python=${TBDPROF_TORCH_PYTHON:-${TBDPROF_TORCH_VENV:-${HOME:-/tmp}/.cache/tbdprof/torch-venv}/bin/python}
if ! [ -x "$python" ] || ! "$python" -c "import importlib.util as u; assert u.find_spec('torch')" 2>/dev/null; then
    echo "SKIP: no PyTorch at $python (scripts/torch-venv.sh installs it; scripts/test.sh runs it)"
    exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/tbdprof-pytorch-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL ($case_name): $*"; echo "--- output:"; tail -n 40 "$work/out"; exit 1; }

# record ARGS...: tbdprof --sim into $work/trace.sqlite; output in $work/out. Its run directory
# (with the python library mirror, sim_libraries.h) must be gone afterwards.
record() {
    local start=$SECONDS
    mkdir -p "$work/tmp"
    TMPDIR="$work/tmp" "$TBDPROF" --sim -o "$work/trace.sqlite" --force "$@" >"$work/out" 2>&1
    local status=$?
    echo "recorded in $((SECONDS - start)) s (exit $status)"
    if grep -q "libnccl.so.2: cannot open shared object file" "$work/out"; then
        echo "SKIP: the simulated NCCL (libnccl.so.2) is not built; PyTorch's CUDA library links it"
        exit 77
    fi
    [ "$status" -eq 0 ] || fail "tbdprof exited $status"
    # (PyTorch keeps caches of its own there too: torchinductor_<user>.)
    local left
    left=$(cd "$work/tmp" && ls -d tbdprof-run-* 2>/dev/null)
    [ -z "$left" ] || fail "run directory left behind: $left"
}

count() { sqlite3 "$work/trace.sqlite" "$1"; }

check_trace() {  # check_trace LIBRARY_CALL_PATTERN
    local kernels allocations calls
    kernels=$(count "SELECT count(*) FROM kernels")
    allocations=$(count "SELECT count(*) FROM allocations")
    calls=$(count "SELECT count(*) FROM library_calls WHERE name LIKE '$1'")
    echo "trace: $kernels kernels, $allocations allocations, $calls library calls like '$1'"
    [ "$kernels" -gt 0 ] || fail "no kernels in the trace"
    [ "$allocations" -gt 0 ] || fail "no allocations in the trace"
    [ "$calls" -gt 0 ] || fail "no library call like '$1' in the trace"
}

check_sdpa() {  # one fused forward and one backward kernel per step, each inside cudnnBackendExecute
    local forward backward outside
    forward=$(count "SELECT count(*) FROM kernels k JOIN functions f ON f.id = k.function JOIN strings s ON s.id = f.name
                     WHERE s.text LIKE '%_sdpa_sm90_flash_fprop_%'")
    backward=$(count "SELECT count(*) FROM kernels k JOIN functions f ON f.id = k.function JOIN strings s ON s.id = f.name
                      WHERE s.text LIKE '%_sdpa_sm90_flash_bprop_%'")
    outside=$(count "SELECT count(*) FROM kernels k JOIN functions f ON f.id = k.function JOIN strings s ON s.id = f.name
                     LEFT JOIN library_calls l ON l.id = k.library_call
                     WHERE s.text LIKE '%_sdpa_sm90_%' AND (l.name IS NULL OR l.name <> 'cudnnBackendExecute')")
    echo "trace: $forward fused attention forward kernels, $backward backward, $outside outside cudnnBackendExecute"
    [ "$forward" -eq 2 ] && [ "$backward" -eq 2 ] || fail "expected 2 forward and 2 backward fused attention kernels"
    [ "$outside" -eq 0 ] || fail "fused attention kernels outside cudnnBackendExecute"
}

check_backend_flops() {  # every cudnnBackendExecute recorded with FLOPs (its graph summarised at finalization)
    local calls zero
    calls=$(count "SELECT count(*) FROM library_calls WHERE name = 'cudnnBackendExecute'")
    zero=$(count "SELECT count(*) FROM library_calls WHERE name = 'cudnnBackendExecute' AND NOT flops > 0")
    echo "trace: $calls cudnnBackendExecute calls, $zero without FLOPs"
    [ "$calls" -gt 0 ] && [ "$zero" -eq 0 ] || fail "cudnnBackendExecute calls without FLOPs"
    count "SELECT op || ' ' || count(*) FROM library_calls WHERE name = 'cudnnBackendExecute' GROUP BY op"
}

check_backend_truth() {  # check_backend_truth KERNEL_NAME_PART OP_PATTERN: the calls' FLOPs equal the truth's kernels'
    local truth trace
    truth=$(awk -F'\t' -v part="$1" '$1 == "kernel" && index($12, part) { s += $7 } END { printf "%.0f", s }' "$work/truth.tsv")
    trace=$(count "SELECT printf('%.0f', total(flops)) FROM library_calls
                   WHERE name = 'cudnnBackendExecute' AND op LIKE '$2'")
    echo "FLOPs of the $2 calls: truth $truth, trace $trace"
    [ "$truth" != 0 ] && [ "$truth" = "$trace" ] || fail "$2 FLOPs $trace != truth $truth"
}

check_graph() {  # check_graph REPLAYS
    local launches graph_kernels truth_kernels truth_allocs truth_frees
    launches=$(count "SELECT count(*) FROM graph_launches")
    graph_kernels=$(count "SELECT count(*) FROM kernels WHERE graph_launch IS NOT NULL")
    # Truth lines of replayed work carry the graph and node ids: two fields more.
    truth_kernels=$(awk -F'\t' '$1 == "kernel" && NF == 14' "$work/truth.tsv" | wc -l)
    truth_allocs=$(awk -F'\t' '$1 == "alloc" && NF == 10' "$work/truth.tsv" | wc -l)
    truth_frees=$(awk -F'\t' '$1 == "free" && NF == 10' "$work/truth.tsv" | wc -l)
    echo "trace: $launches graph launches, $graph_kernels replayed kernels (truth $truth_kernels);" \
        "truth: $truth_allocs graph allocations, $truth_frees graph frees"
    [ "$launches" -eq "$1" ] || fail "expected $1 graph launches, got $launches"
    [ "$truth_kernels" -gt 0 ] && [ $((truth_kernels % $1)) -eq 0 ] || fail "truth: $truth_kernels replayed kernels"
    [ "$graph_kernels" -eq "$truth_kernels" ] || fail "trace has $graph_kernels replayed kernels, truth $truth_kernels"
    [ "$truth_allocs" -gt 0 ] && [ $((truth_allocs % $1)) -eq 0 ] || fail "truth: $truth_allocs graph allocations"
    grep -q "^backend cudaMallocAsync" "$work/out" || fail "PyTorch did not use the cudaMallocAsync backend"
}

check_import() {
    record -- "$python" "$here/probe.py"
    grep -q "^available True" "$work/out" || fail "torch.cuda.is_available() is not True"
    grep -q "^device .*NVIDIA" "$work/out" || fail "no simulated device name"
    local simgpu mapped outside=0
    simgpu=$(realpath "$TBDPROF_SIMGPU_DIR")
    grep -q "^mapped $simgpu/libcudart.so" "$work/out" || fail "the simulated libcudart is not mapped"
    grep -q "^mapped $simgpu/libcublas.so" "$work/out" || fail "the simulated libcublas is not mapped"
    while read -r _ mapped; do
        case "$(realpath "$mapped")" in
            "$simgpu"/*) ;;
            *) echo "a real NVIDIA library is mapped: $mapped"; outside=1 ;;
        esac
    done < <(grep "^mapped " "$work/out")
    [ "$outside" -eq 0 ] || fail "libraries from outside the simulated GPU were mapped"
    echo "ok: $(grep -c '^mapped ' "$work/out") NVIDIA-named libraries mapped, all simulated"
}

# Per rank, on the plain recording (no NVTX step ranges): the iterations come from the kernel
# sequence, the parameters should be weights (all their bytes), the reduced buckets gradients (every
# steady step's: 3 x the parameters' bytes) and so the .grad they are copied back into (as many bytes
# again, docs/tagging.md change 24), as the script's parameter bytes say.
check_ddp_gradients() {
    local ranges rank process parameters weights buckets grads steps momentum first_at_batch
    ranges=$(count "SELECT count(*) FROM ranges")
    [ "$ranges" -eq 0 ] || fail "the recording has $ranges NVTX ranges; this check is for a plain one"
    for rank in 0 1; do
        parameters=$(grep -o "rank $rank: parameter bytes [0-9]*" "$work/out" | awk '{print $NF}')
        process=$(count "SELECT process FROM process_ranks WHERE rank = $rank")
        steps=$(count "SELECT count(*) FROM iterations WHERE process = $process AND coalesce(kind, 'training') = 'training'")
        weights=$(count "SELECT total(s.bytes) FROM allocation_subranges s JOIN allocations a ON a.id = s.allocation
                         WHERE a.process = $process AND s.category = 'weights'")
        buckets=$(count "SELECT total(s.bytes) FROM allocation_subranges s JOIN allocations a ON a.id = s.allocation
                         WHERE a.process = $process AND s.category = 'gradients' AND s.rule = 'reduced-gradient-bucket'")
        grads=$(count "SELECT total(s.bytes) FROM allocation_subranges s JOIN allocations a ON a.id = s.allocation
                       WHERE a.process = $process AND s.category = 'gradients' AND s.rule != 'reduced-gradient-bucket'")
        momentum=$(count "SELECT total(s.bytes) FROM allocation_subranges s JOIN allocations a ON a.id = s.allocation
                          WHERE a.process = $process AND s.category = 'optimizer_state'")
        # The first step begins with its batch (a host-to-device copy), not with the set-up's copies.
        first_at_batch=$(count "SELECT count(*) FROM copies c WHERE c.process = $process AND c.kind = 'htod'
                                AND c.start_ns - c.queued_ns = (SELECT min(begin_ns) FROM iterations
                                    WHERE process = $process AND coalesce(kind, 'training') = 'training')")
        weights=${weights%.0} buckets=${buckets%.0} grads=${grads%.0} momentum=${momentum%.0}
        echo "rank $rank: $steps steps from the kernel sequence (the first at its batch: $first_at_batch)," \
            "parameters $parameters bytes, weights $weights, momentum $momentum, reduced gradient buckets $buckets," \
            "other gradients (.grad) $grads"
        [ -n "$parameters" ] && [ "$parameters" -gt 0 ] || fail "rank $rank printed no parameter bytes"
        # All 4 steps, DDP's first (one all-reduce of the whole model, one update kernel) included.
        [ "$steps" -eq 4 ] || fail "rank $rank: $steps training steps found, the script ran 4"
        [ "$first_at_batch" -ge 1 ] || fail "rank $rank: the first step does not begin with its batch"
        [ "$momentum" -eq "$parameters" ] || fail "rank $rank: momentum $momentum bytes, parameters $parameters"
        [ "$weights" -eq "$parameters" ] || fail "rank $rank: weights $weights bytes, parameters $parameters"
        # Every step's buckets (the first step's one bucket of the whole model too), and the .grad each
        # is copied back into (one tensor from backward's GEMM to the update, not cut where the sum
        # comes back).
        [ "$buckets" -ge $((4 * parameters)) ] ||
            fail "rank $rank: gradient buckets $buckets bytes < 4 steps x parameters $parameters"
        [ "$grads" -ge $((3 * parameters)) ] ||
            fail "rank $rank: .grad tagged gradients $grads bytes < 3 steps x parameters $parameters"
    done
}

# The report's memory is the trace's, both ranks together; each rank's own peak (memory.processes)
# holds its parameters once as weights, not both ranks' (docs/tagging.md, change 22).
check_ddp_memory() {
    local rank process parameters own
    "$TBDPROF" report "$work/trace.sqlite" --format json --quiet -o "$work/report.json" || fail "tbdprof report --format json failed"
    for rank in 0 1; do
        parameters=$(grep -o "rank $rank: parameter bytes [0-9]*" "$work/out" | awk '{print $NF}')
        process=$(count "SELECT process FROM process_ranks WHERE rank = $rank")
        own=$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["memory"]
print(*[p["at_peak"]["weights"] for p in m["processes"] if p["process"] == int(sys.argv[2])])' "$work/report.json" "$process")
        echo "rank $rank: weights at its own peak $own bytes (parameters $parameters)"
        [ "$own" = "$parameters" ] || fail "rank $rank: weights at its own peak '$own' bytes, parameters $parameters"
    done
}

check_ddp() {
    local samples=$here/../../samples/pytorch simgpu outside=0 ranks truth trace sums
    TBDSIM_DEVICE_COUNT=2 TBDSIM_TRUTH="$work/truth.tsv" record -- "$python" -m torch.distributed.run \
        --nproc-per-node 2 "$samples/ddp_train.py" --steps 4 --list-nvidia-libraries
    # Both ranks share the launcher's output, so a rank's line may follow another process's text on the same
    # line: match anywhere in a line, and count distinct ranks.
    [ "$(grep -o 'ddp_train rank [01]: steps=4 ' "$work/out" | sort -u | wc -l)" -eq 2 ] ||
        fail "a rank did not finish its 4 steps"
    ranks=$(count "SELECT group_concat(rank || '/' || world_size, ' ') FROM (SELECT * FROM process_ranks ORDER BY rank)")
    echo "trace: ranks $ranks"
    [ "$ranks" = "0/2 1/2" ] || fail "expected ranks 0 and 1 of 2, got '$ranks'"
    if [ "$(grep -o 'rank [01]: all_reduce ok' "$work/out" | sort -u | wc -l)" -ne 2 ]; then
        # The values each rank compared (ddp_train.py prints them with its verdict), or that it printed
        # none; found anywhere in a line, as counted (another process's output may precede it there).
        fail "the all-reduce check failed: $(grep -o 'rank [01]: all_reduce.*' "$work/out" | tr '\n' ';' |
            sed 's/;$//' || true) (expected 'rank R: all_reduce ok' from ranks 0 and 1)"
    fi
    sums=$(grep -o "parameters after DDP's broadcast [0-9a-f]*" "$work/out" | awk '{print $NF}' | sort -u | wc -l)
    [ "$sums" -eq 1 ] || fail "the ranks' parameters differ after DDP's broadcast"
    for op in AllReduce Broadcast; do
        local call
        call=nccl_$(echo "$op" | sed 's/\([a-z]\)\([A-Z]\)/\1_\2/g' | tr 'A-Z' 'a-z')
        truth=$(awk -F'\t' -v op="$op" '$1 == "nccl" && $4 == op' "$work/truth.tsv" | wc -l)
        trace=$(count "SELECT count(*) FROM library_calls WHERE op = '$call'")
        echo "$op: truth $truth, trace $trace"
        [ "$truth" -gt 0 ] && [ "$trace" -eq "$truth" ] || fail "$op: trace $trace calls, truth $truth"
    done
    check_ddp_gradients
    check_ddp_memory
    "$TBDPROF" report "$work/trace.sqlite" >"$work/report" 2>&1 || fail "tbdprof report failed"
    grep -q "over 2 ranks of 2 in the window" "$work/report" || fail "no communication section over 2 ranks"
    simgpu=$(realpath "$TBDPROF_SIMGPU_DIR")
    grep -o 'rank [01] mapped [^ ]*' "$work/out" >"$work/mapped" || true
    [ "$(grep -c '^rank 0 mapped [^ ]*libnccl' "$work/mapped")" -eq 1 ] || fail "rank 0 did not list its libnccl"
    while read -r _ _ _ mapped; do
        case "$(realpath "$mapped")" in
            "$simgpu"/*) ;;
            *) echo "a real NVIDIA library is mapped: $mapped"; outside=1 ;;
        esac
    done <"$work/mapped"
    [ "$outside" -eq 0 ] || fail "libraries from outside the simulated GPU were mapped"
}

case "$case_name" in
    import) check_import ;;
    mlp) record -- "$python" "$here/smoke_mlp.py" 2 && check_trace 'cublas%' ;;
    cnn) TBDSIM_TRUTH="$work/truth.tsv" record -- "$python" "$here/smoke_cnn.py" 2 && check_trace 'cudnn%' &&
        check_backend_flops && check_backend_truth _implicit_gemm_ 'convolution_%' ;;
    transformer) record -- "$python" "$here/smoke_transformer.py" 2 && check_trace 'cublas%' ;;
    sdpa) TBDSIM_TRUTH="$work/truth.tsv" record -- "$python" "$here/smoke_sdpa.py" 2 && check_trace 'cudnnBackendExecute' &&
        check_sdpa && check_backend_flops && check_backend_truth _sdpa_sm90_ 'attention_%' ;;
    graph) TBDSIM_TRUTH="$work/truth.tsv" PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync \
        record -- "$python" "$here/smoke_graph.py" 5 && check_trace 'cublas%' && check_graph 5 ;;
    ddp) check_ddp ;;
    expandable) PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True record --framework=none -- "$python" "$here/smoke_mlp.py" 2 &&
        check_trace 'cublas%' ;;
    caching) record --framework=none -- "$python" "$here/smoke_mlp.py" 2 && check_trace 'cublas%' ;;
    *) echo "run_case.sh: unknown case '$case_name'" >&2; exit 2 ;;
esac
grep -q "steps done" "$work/out" || [ "$case_name" = ddp ] || [ "$case_name" = import ] || fail "the script did not finish its steps"
echo "passed"
