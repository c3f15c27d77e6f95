#!/usr/bin/env bash
# Data-parallel training on 2 ranks with the simulated NCCL (dp_train starts one process per rank,
# torchrun-style, with RANK/LOCAL_RANK/WORLD_SIZE): one trace with a process per rank and its rank and
# world size; every NCCL operation of the ground truth recorded exactly once as an NCCL call, with
# rank, size, bytes and its one kernel attached; the kernels match the truth; the slow rank (host
# work before each step) makes the other rank's all-reduces end later, so rank 0's NCCL kernels last
# longer by about the slow rank's host work; the toolkit's real libnccl is never loaded. Then the
# ZeRO-like run: reduce-scatters and all-gathers, each recorded once. The communicators' identities
# (recorded at their creation, docs/collector.md): one for the world communicator on both ranks
# (ncclCommInitRank); with --subgroups 2 on 4 ranks (ncclCommSplit by color) one per subgroup, shared by
# its two ranks, apart from the other's and the world's; one through dlsym (ncclCommInitAll).
source "$(dirname "$0")/common.sh"
: "${TBDPROF_BIN_DIR:?}" "${TRACE_VS_TRUTH:?}"
cd "$WORK" || exit 1
q() { sqlite3 "$WORK/trace.sqlite" "$1"; }
steps=3 slow_us=40000

LD_DEBUG=files TBDSIM_TRUTH="$WORK/truth.tsv" "$TBDPROF" --sim -o "$WORK/trace.sqlite" -- "$TBDPROF_BIN_DIR/dp_train" \
    --ranks 2 --iterations $steps --layers 4 --hidden 128 --buckets 2 --slow-rank 1 --slow-us $slow_us \
    >"$WORK/out" 2>"$WORK/err"
status=$?
grep -v "^ *[0-9]*:" "$WORK/err"
[ "$status" -eq 0 ] || fail "tbdprof exited $status"

# The loader's own record: every libnccl it initialized is the simulated one.
inits=$(grep -c "calling init: .*libnccl\.so" "$WORK/err")
real=$(grep "calling init: .*libnccl\.so" "$WORK/err" | grep -vc "/lib/simgpu/libnccl\.so")
[ "$inits" -ge 2 ] && [ "$real" -eq 0 ] && pass "libnccl initialized $inits times, always the simulated one" ||
    fail "libnccl: $inits initializations, $real not the simulated one"

[ "$(q "SELECT group_concat(rank || '/' || local_rank || '/' || world_size, ' ') FROM (SELECT * FROM process_ranks ORDER BY rank)")" = "0/0/2 1/1/2" ] &&
    pass "two ranks recorded with their world size" || fail "process_ranks: $(q "SELECT * FROM process_ranks")"

# Every operation of the truth once, per process and operation.
name_case="CASE n.op WHEN 'all_reduce' THEN 'AllReduce' WHEN 'reduce_scatter' THEN 'ReduceScatter' WHEN 'all_gather' THEN 'AllGather'
    WHEN 'broadcast' THEN 'Broadcast' WHEN 'reduce' THEN 'Reduce' WHEN 'send' THEN 'Send' WHEN 'recv' THEN 'Recv' ELSE n.op END"
compare_counts() {
    awk -F'\t' '$1 == "nccl" { print $2 "|" $4 }' "$WORK/truth.tsv" | sort | uniq -c | awk '{ print $2 "|" $1 }' >"$WORK/want"
    q "SELECT p.pid || '|' || $name_case || '|' || count(*) FROM nccl_calls n JOIN processes p ON p.id = n.process
       GROUP BY p.pid, n.op ORDER BY 1" | sort >"$WORK/got"
    [ -s "$WORK/want" ] && diff "$WORK/want" "$WORK/got" >/dev/null && pass "$1: every NCCL operation recorded once ($(wc -l <"$WORK/want") kinds)" ||
        fail "$1: NCCL calls per process differ from the truth: want $(cat "$WORK/want"), got $(cat "$WORK/got")"
}
compare_counts "DDP buckets"
[ "$(q "SELECT count(*) FROM nccl_calls n WHERE (SELECT count(*) FROM kernel_view k WHERE k.library_call = n.library_call AND k.name LIKE 'ncclDevKernel_AllReduce_%') != 1")" = 0 ] &&
    pass "each all-reduce call has its one kernel" || fail "an NCCL call without exactly one ncclDevKernel_AllReduce kernel"
[ "$(q "SELECT count(*) FROM nccl_calls n JOIN process_ranks r ON r.process = n.process
        WHERE n.rank != r.rank OR n.nranks != 2 OR n.datatype != 'float32' OR n.reduction != 'avg' OR n.bytes != 4 * n.count")" = 0 ] &&
    pass "rank, size, type, reduction and bytes of every call" || fail "an NCCL call with wrong facts: $(q "SELECT * FROM nccl_calls LIMIT 3")"
[ "$(q "SELECT count(DISTINCT communicator_identity) || '/' || count(DISTINCT process) || '/' ||
        sum(communicator_identity IS NULL) FROM nccl_calls")" = "1/2/0" ] &&
    pass "InitRank: one communicator identity, on both ranks" ||
    fail "InitRank identities: $(q "SELECT process, communicator, communicator_identity, count(*) FROM nccl_calls GROUP BY 1, 2, 3")"
grep -v "^nccl" "$WORK/truth.tsv" >"$WORK/driver_truth.tsv"
"$TRACE_VS_TRUTH" "$WORK/trace.sqlite" "$WORK/driver_truth.tsv" >/dev/null && pass "kernels match the truth" || fail "trace differs from the truth"

# The slow rank: rank 0's collectives wait for it, about slow_us per step in all.
waited=$(q "SELECT (SELECT sum(k.duration_ns) FROM kernel_view k JOIN process_ranks r ON r.process = k.process
                    WHERE r.rank = 0 AND k.name LIKE 'nccl%') -
                   (SELECT sum(k.duration_ns) FROM kernel_view k JOIN process_ranks r ON r.process = k.process
                    WHERE r.rank = 1 AND k.name LIKE 'nccl%')")
[ "${waited:-0}" -gt $((steps * slow_us * 1000 / 2)) ] && pass "rank 0 waited ${waited} ns in its NCCL kernels for the slow rank" ||
    fail "rank 0's NCCL kernels are not longer than the slow rank's by half its host work: ${waited:-none} ns"

rm -f "$WORK/truth.tsv" "$WORK/trace.sqlite"
TBDSIM_TRUTH="$WORK/truth.tsv" "$TBDPROF" --sim -o "$WORK/trace.sqlite" -- "$TBDPROF_BIN_DIR/dp_train" \
    --ranks 2 --iterations 2 --layers 4 --hidden 128 --buckets 2 --zero >"$WORK/out" 2>"$WORK/err" ||
    fail "the --zero run failed: $(cat "$WORK/err")"
compare_counts "ZeRO"
[ "$(q "SELECT count(DISTINCT op) FROM nccl_calls WHERE op IN ('reduce_scatter', 'all_gather')")" = 2 ] &&
    pass "ZeRO: reduce-scatters and all-gathers" || fail "ZeRO run: $(q "SELECT op, count(*) FROM nccl_calls GROUP BY op")"

rm -f "$WORK/truth.tsv" "$WORK/trace.sqlite"
TBDSIM_DEVICE_COUNT=4 "$TBDPROF" --sim -o "$WORK/trace.sqlite" -- "$TBDPROF_BIN_DIR/dp_train" \
    --ranks 4 --iterations 2 --layers 4 --hidden 128 --buckets 2 --subgroups 2 >"$WORK/out" 2>"$WORK/err" ||
    fail "the --subgroups run failed: $(cat "$WORK/err")"
ids() { q "SELECT count(DISTINCT $1) FROM nccl_calls n JOIN process_ranks r ON r.process = n.process WHERE $2"; }
[ "$(ids communicator_identity "n.nranks = 4")/$(ids communicator_identity "n.nranks = 2")/$(ids "r.rank / 2 || ':' || communicator_identity" "n.nranks = 2")/$(ids communicator_identity "n.communicator_identity IS NULL")/$(ids r.rank "n.nranks = 2")" = "1/2/2/0/4" ] &&
    [ "$(q "SELECT count(*) FROM nccl_calls a JOIN nccl_calls b ON a.communicator_identity = b.communicator_identity WHERE a.nranks != b.nranks")" = 0 ] &&
    pass "Split: one identity per subgroup, shared by its ranks, apart from the world's" ||
    fail "Split identities: $(q "SELECT r.rank, n.nranks, n.communicator_identity, count(*) FROM nccl_calls n JOIN process_ranks r ON r.process = n.process GROUP BY 1, 2, 3")"

# A framework's own loader: dlopen + dlsym, RTLD_LOCAL. Every call recorded, with rank and size (asked
# of the library the calls went to); the grouped broadcast's kernel belongs to ncclGroupEnd.
rm -f "$WORK/truth.tsv" "$WORK/trace.sqlite"
TBDSIM_TRUTH="$WORK/truth.tsv" "$TBDPROF" --sim -o "$WORK/trace.sqlite" -- "$TBDPROF_BIN_DIR/nccl_dlopen_program" \
    >"$WORK/out" 2>"$WORK/err" || fail "the dlopen program failed: $(cat "$WORK/err")"
compare_counts "dlopen"
got=$(q "SELECT group_concat(n.op || ':' || n.datatype || ':' || ifnull(n.reduction, '-') || ':' || n.rank || '/' || n.nranks || ':' ||
         (SELECT count(*) FROM kernel_view k WHERE k.library_call = n.library_call), ' ') FROM nccl_calls n ORDER BY n.library_call")
want="all_reduce:float32:sum:0/1:1 all_reduce:bfloat16:max:0/1:1 broadcast:int32:-:0/1:0"
[ "$got" = "$want" ] && pass "dlopen: calls recorded with their facts and kernels" || fail "dlopen: got '$got', want '$want'"
[ "$(q "SELECT count(DISTINCT communicator_identity) || '/' || sum(communicator_identity IS NULL) FROM nccl_calls")" = "1/0" ] &&
    pass "dlopen: the communicator's identity (ncclCommInitAll through dlsym)" ||
    fail "dlopen: identities $(q "SELECT communicator_identity, count(*) FROM nccl_calls GROUP BY 1")"
[ "$(q "SELECT count(*) FROM library_calls l JOIN kernel_view k ON k.library_call = l.id
        WHERE l.op = 'nccl_group_end' AND k.name = 'ncclDevKernel_Broadcast_RING_LL'")" = 1 ] &&
    pass "dlopen: the grouped broadcast's kernel belongs to ncclGroupEnd" || fail "dlopen: no ncclGroupEnd call with the broadcast kernel"
finish
