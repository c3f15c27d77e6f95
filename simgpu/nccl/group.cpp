#include "group.h"

#include <algorithm>
#include <vector>

#include "comm.h"
#include "exchange.h"
#include "launch.h"
#include "profiling_alias.h"
#include "truth.h"

namespace tbdsim::nccl {
namespace {

struct GroupState {
    int depth = 0;
    std::vector<PendingOp> ops;
    std::vector<ncclComm*> joins;
    ncclResult_t error = ncclSuccess;  // the first error of a call inside the group
};
thread_local GroupState t_group;

// One communicator's share of a group: one kernel on the stream of its first operation.
struct Batch {
    ncclComm* comm = nullptr;
    CUstream stream = nullptr;
    std::vector<PendingOp> ops;
    uint64_t arrival_ns = 0;
    uint64_t collective_seq = 0;     // 0 when the batch has no collective
    std::vector<OperationKey> keys;  // per op: which operation of the communicator (exchange.h)
    bool moves_data = true;          // false while its stream is captured into a graph
};

bool is_p2p(const PendingOp& op) {
    return op.op == Operation::Send || op.op == Operation::Recv;
}

size_t type_bytes(const PendingOp& op) {
    return op.count * type_size_bytes(op.type);
}

// The buffer size the cost model takes (model.h): AllGather's receive buffer, ReduceScatter's send
// buffer, else the count the call names.
uint64_t model_bytes(const PendingOp& op) {
    const size_t n = size_t(op.comm->nranks);
    if (op.op == Operation::AllGather || op.op == Operation::ReduceScatter) return type_bytes(op) * n;
    return type_bytes(op);
}

std::vector<Batch> batches_of(const std::vector<PendingOp>& ops) {
    std::vector<Batch> batches;
    for (const PendingOp& op : ops) {
        auto it = std::find_if(batches.begin(), batches.end(), [&](const Batch& b) { return b.comm == op.comm; });
        if (it == batches.end()) {
            batches.push_back({op.comm, op.stream, {}, 0, 0, {}, true});
            it = batches.end() - 1;
        }
        it->ops.push_back(op);
    }
    return batches;
}

// Stages each operation's data for the peers (exchange.h), then posts the arrivals: a peer that sees
// an arrival finds the data there.
ncclResult_t post(Batch& b) {
    if (ncclResult_t rc = stream_arrival_ns(*b.comm, b.stream, &b.arrival_ns); rc != ncclSuccess) return rc;
    ncclComm& c = *b.comm;
    b.moves_data = moves_data() && !stream_capturing(c, b.stream);
    if (std::any_of(b.ops.begin(), b.ops.end(), [](const PendingOp& op) { return !is_p2p(op); }))
        b.collective_seq = ++c.collective_seq;
    int collective_index = 0;
    for (const PendingOp& op : b.ops) {
        if (!is_p2p(op))
            b.keys.push_back({b.collective_seq, collective_index++});
        else if (op.op == Operation::Send)
            b.keys.push_back({++c.send_seq[size_t(op.peer)], 0});
        else
            b.keys.push_back({++c.recv_seq[size_t(op.peer)], 0});
        if (ncclResult_t rc = b.moves_data ? stage_contribution(op, b.keys.back()) : ncclSuccess; rc != ncclSuccess)
            return rc;
        if (op.op == Operation::Send) c.rendezvous->post_send(c.rank, op.peer, b.keys.back().seq, b.arrival_ns);
        if (op.op == Operation::Recv) c.rendezvous->post_recv(op.peer, c.rank, b.keys.back().seq, b.arrival_ns);
    }
    if (b.collective_seq != 0) c.rendezvous->post_collective(c.rank, b.collective_seq, b.arrival_ns);
    return ncclSuccess;
}

// The kernel of a batch: named after its first collective, else ncclDevKernel_SendRecv.
std::string batch_kernel(const Batch& b) {
    const ncclComm& c = *b.comm;
    auto named = std::find_if(b.ops.begin(), b.ops.end(), [](const PendingOp& op) { return !is_p2p(op); });
    const PendingOp& op = named != b.ops.end() ? *named : b.ops.front();
    return kernel_name(op.op, op.redop, op.type, choose(op.op, model_bytes(op), c.nranks, c.bus_bytes_per_s));
}

// What the driver's resolver computes for one batch (inside the launch call): each operation's end.
struct Resolution {
    const Batch* batch = nullptr;
    std::vector<uint64_t> op_end;
    ncclResult_t rc = ncclSuccess;
};

// Waits for the peers: collectives start together when the last rank arrived and run one after the
// other; each send/receive when both sides have arrived. Returns the kernel's end (0 on failure).
uint64_t resolve_end(uint64_t /*start_ns*/, void* user) {
    Resolution& res = *static_cast<Resolution*>(user);
    const Batch& b = *res.batch;
    ncclComm& c = *b.comm;
    res.op_end.assign(b.ops.size(), b.arrival_ns);
    uint64_t clock = b.arrival_ns;
    if (b.collective_seq != 0) res.rc = c.rendezvous->wait_collective(b.collective_seq, &clock);
    for (size_t i = 0; i < b.ops.size() && res.rc == ncclSuccess; ++i) {
        const PendingOp& op = b.ops[i];
        const uint64_t duration = choose(op.op, model_bytes(op), c.nranks, c.bus_bytes_per_s).duration_ns;
        if (!is_p2p(op)) {
            clock += duration;
            res.op_end[i] = clock;
            continue;
        }
        uint64_t peer_arrival = 0;
        res.rc = op.op == Operation::Send ? c.rendezvous->wait_recv(c.rank, op.peer, b.keys[i].seq, &peer_arrival)
                                          : c.rendezvous->wait_send(op.peer, c.rank, b.keys[i].seq, &peer_arrival);
        res.op_end[i] = std::max(b.arrival_ns, peer_arrival) + duration;
    }
    return res.rc == ncclSuccess ? *std::max_element(res.op_end.begin(), res.op_end.end()) : 0;
}

ncclResult_t finish(const Batch& b) {
    const ncclComm& c = *b.comm;
    const std::string kernel = batch_kernel(b);
    const PendingOp& first = b.ops.front();
    const TbdsimNcclArgs args{first.sendbuff, first.recvbuff, first.count, int(first.type), int(first.redop),
                              first.root,     first.peer,     c.rank,      c.nranks};
    Resolution res;
    res.batch = &b;
    ncclResult_t rc = launch_collective(c, b.stream, kernel, args, b.arrival_ns, resolve_end, &res);
    if (res.rc != ncclSuccess) return res.rc;
    if (rc != ncclSuccess) return rc;
    // Every peer has arrived (the launch waited for them): their data is staged.
    for (size_t i = 0; i < b.ops.size() && b.moves_data; ++i)
        if (ncclResult_t moved = deliver_result(b.ops[i], b.keys[i]); moved != ncclSuccess) return moved;
    for (size_t i = 0; i < b.ops.size(); ++i) truth_write_op(b.ops[i], kernel, b.arrival_ns, res.op_end[i]);
    return ncclSuccess;
}

ncclResult_t run(const std::vector<PendingOp>& ops) {
    std::vector<Batch> batches = batches_of(ops);
    ncclResult_t result = ncclSuccess;
    for (Batch& b : batches)
        if (ncclResult_t rc = post(b); rc != ncclSuccess) return rc;
    for (const Batch& b : batches)
        if (ncclResult_t rc = finish(b); rc != ncclSuccess && result == ncclSuccess) result = rc;
    return result;
}

}  // namespace

bool in_group() {
    return t_group.depth > 0;
}

void defer_join(ncclComm* comm) {
    t_group.joins.push_back(comm);
}

ncclResult_t enqueue(const PendingOp& op) {
    if (t_group.depth == 0) return run({op});
    t_group.ops.push_back(op);
    return ncclSuccess;
}

}  // namespace tbdsim::nccl

using namespace tbdsim::nccl;

// The nccl.h entry points: exported (the library builds with hidden visibility).
#pragma GCC visibility push(default)
extern "C" {

ncclResult_t ncclGroupStart() {
    ++t_group.depth;
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
    if (t_group.depth == 0) return ncclInvalidUsage;
    if (--t_group.depth > 0) return ncclSuccess;
    std::vector<PendingOp> ops = std::move(t_group.ops);
    std::vector<ncclComm*> joins = std::move(t_group.joins);
    t_group = {};
    ncclResult_t result = ncclSuccess;
    for (ncclComm* comm : joins) {
        if (ncclResult_t rc = comm->rendezvous->wait_joined(); rc != ncclSuccess) result = rc;
        comm->joined_pending = false;
    }
    if (result != ncclSuccess) return result;
    return ops.empty() ? ncclSuccess : run(ops);
}

}  // extern "C"
#pragma GCC visibility pop

TBDSIM_NCCL_PROFILING_ALIAS(ncclGroupStart)
TBDSIM_NCCL_PROFILING_ALIAS(ncclGroupEnd)
