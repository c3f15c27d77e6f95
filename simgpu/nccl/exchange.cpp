#include "exchange.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "comm.h"
#include "reduce.h"

namespace tbdsim::nccl {
namespace {

// The head of a staged segment; the data follows at kHeaderBytes.
struct StageHeader {
    std::atomic<int32_t> readers_left;  // the reader that brings it to 0 removes the segment's name
};
constexpr size_t kHeaderBytes = 64;

bool is_p2p(Operation op) {
    return op == Operation::Send || op == Operation::Recv;
}

// What one rank contributes: its send buffer (ReduceScatter's holds a block for every rank).
size_t contribution_bytes(const PendingOp& op) {
    const size_t bytes = op.count * type_size_bytes(op.type);
    return op.op == Operation::ReduceScatter ? bytes * size_t(op.comm->nranks) : bytes;
}

// How many other ranks read this rank's contribution; 0: nothing is staged.
int readers_of(const PendingOp& op) {
    const int n = op.comm->nranks, me = op.comm->rank;
    switch (op.op) {
        case Operation::AllReduce:
        case Operation::AllGather:
        case Operation::ReduceScatter:
            return n - 1;
        case Operation::Broadcast:
            return me == op.root ? n - 1 : 0;
        case Operation::Reduce:
            return me == op.root ? 0 : 1;
        case Operation::Send:
            return 1;
        case Operation::Recv:
            return 0;
    }
    return 0;
}

// The segment `writer` staged for the operation: per collective (sequence number and index in its
// group) and writing rank, or per send (sender, receiver, sequence number of that pair).
std::string segment_name(const PendingOp& op, OperationKey key, int writer) {
    const ncclComm& c = *op.comm;
    if (is_p2p(op.op)) {
        const int receiver = op.op == Operation::Send ? op.peer : c.rank;
        return c.name + "-p" + std::to_string(writer) + "." + std::to_string(receiver) + "-" + std::to_string(key.seq);
    }
    return c.name + "-c" + std::to_string(key.seq) + "." + std::to_string(key.index) + "-r" + std::to_string(writer);
}

ncclResult_t fail(const std::string& text) {
    set_last_error(text);
    return ncclSystemError;
}

// A peer's staged contribution, mapped for reading; on destruction this reader is counted out.
class PeerData {
public:
    explicit PeerData(const std::string& name) : name_(name) {
        const int fd = shm_open(name.c_str(), O_RDWR, 0600);
        struct stat st {};
        if (fd < 0) return;
        if (fstat(fd, &st) == 0 && size_t(st.st_size) >= kHeaderBytes) {
            void* base = mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (base != MAP_FAILED) {
                base_ = base;
                bytes_ = size_t(st.st_size);
            }
        }
        close(fd);
    }
    ~PeerData() {
        if (base_ == nullptr) return;
        if (static_cast<StageHeader*>(base_)->readers_left.fetch_sub(1) == 1) shm_unlink(name_.c_str());
        munmap(base_, bytes_);
    }
    PeerData(const PeerData&) = delete;
    PeerData& operator=(const PeerData&) = delete;
    // The data, or null when the segment is missing or shorter than `bytes`.
    const void* data(size_t bytes) const {
        return base_ != nullptr && bytes_ >= kHeaderBytes + bytes ? static_cast<const char*>(base_) + kHeaderBytes
                                                                  : nullptr;
    }

private:
    std::string name_;
    void* base_ = nullptr;
    size_t bytes_ = 0;
};

ncclResult_t missing(const std::string& name) {
    return fail("the simulated NCCL cannot read a peer's data (" + name + ")");
}

// acc = the reduction over ranks 0..n-1 of `count` elements at byte `offset` of each contribution.
ncclResult_t reduce_ranks(const PendingOp& op, OperationKey key, size_t offset, size_t count,
                          std::vector<unsigned char>* acc) {
    ReduceSpec spec;
    if (!reduce_spec(op.redop, op.type, op.comm->nranks, &spec)) {
        set_last_error("unknown reduction operator");
        return ncclInvalidArgument;
    }
    const size_t element = type_size_bytes(op.type);
    acc->assign(count * element, 0);
    for (int r = 0; r < op.comm->nranks; ++r) {
        if (r == op.comm->rank) {
            const void* own = static_cast<const char*>(op.sendbuff) + offset;
            (r == 0 ? reduce_first : reduce_next)(acc->data(), own, count, op.type, spec);
            continue;
        }
        PeerData peer(segment_name(op, key, r));
        const void* staged = peer.data(contribution_bytes(op));
        if (staged == nullptr) return missing(segment_name(op, key, r));
        (r == 0 ? reduce_first : reduce_next)(acc->data(), static_cast<const char*>(staged) + offset, count, op.type,
                                              spec);
    }
    reduce_finish(acc->data(), count, op.type, spec);
    return ncclSuccess;
}

ncclResult_t deliver_all_gather(const PendingOp& op, OperationKey key) {
    const size_t bytes = contribution_bytes(op);
    auto* recv = static_cast<char*>(op.recvbuff);
    // The own block first: in place, it is the send buffer, which the peers' blocks do not overlap.
    std::memmove(recv + size_t(op.comm->rank) * bytes, op.sendbuff, bytes);
    for (int r = 0; r < op.comm->nranks; ++r) {
        if (r == op.comm->rank) continue;
        PeerData peer(segment_name(op, key, r));
        const void* staged = peer.data(bytes);
        if (staged == nullptr) return missing(segment_name(op, key, r));
        std::memcpy(recv + size_t(r) * bytes, staged, bytes);
    }
    return ncclSuccess;
}

// Broadcast (from the root) and Recv (from the peer): one staged block copied as it is.
ncclResult_t deliver_copy(const PendingOp& op, OperationKey key, int source_rank) {
    const size_t bytes = contribution_bytes(op);
    if (source_rank == op.comm->rank && op.op == Operation::Broadcast) {
        if (op.recvbuff != op.sendbuff) std::memmove(op.recvbuff, op.sendbuff, bytes);
        return ncclSuccess;
    }
    PeerData peer(segment_name(op, key, source_rank));
    const void* staged = peer.data(bytes);
    if (staged == nullptr) return missing(segment_name(op, key, source_rank));
    std::memcpy(op.recvbuff, staged, bytes);
    return ncclSuccess;
}

}  // namespace

bool moves_data() {
    static const bool moves = [] {
        const char* text = std::getenv("TBDSIM_NCCL_DATA");
        return text == nullptr || std::string(text) != "0";
    }();
    return moves;
}

ncclResult_t stage_contribution(const PendingOp& op, OperationKey key) {
    const int readers = readers_of(op);
    const size_t bytes = contribution_bytes(op);
    if (readers == 0 || bytes == 0) return ncclSuccess;
    const std::string name = segment_name(op, key, op.comm->rank);
    const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return fail("cannot create the shared memory of a collective's data (" + name + ")");
    void* base = MAP_FAILED;
    if (ftruncate(fd, off_t(kHeaderBytes + bytes)) == 0)
        base = mmap(nullptr, kHeaderBytes + bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
        shm_unlink(name.c_str());
        return fail("cannot map the shared memory of a collective's data (" + name + ")");
    }
    new (base) StageHeader{};
    static_cast<StageHeader*>(base)->readers_left.store(readers);
    std::memcpy(static_cast<char*>(base) + kHeaderBytes, op.sendbuff, bytes);
    munmap(base, kHeaderBytes + bytes);
    return ncclSuccess;
}

ncclResult_t deliver_result(const PendingOp& op, OperationKey key) {
    if (op.count == 0) return ncclSuccess;
    const ncclComm& c = *op.comm;
    const size_t element = type_size_bytes(op.type);
    std::vector<unsigned char> acc;
    switch (op.op) {
        case Operation::AllReduce:
        case Operation::Reduce: {
            if (op.op == Operation::Reduce && c.rank != op.root) return ncclSuccess;
            if (ncclResult_t rc = reduce_ranks(op, key, 0, op.count, &acc); rc != ncclSuccess) return rc;
            std::memcpy(op.recvbuff, acc.data(), acc.size());
            return ncclSuccess;
        }
        case Operation::ReduceScatter: {
            const size_t offset = size_t(c.rank) * op.count * element;
            if (ncclResult_t rc = reduce_ranks(op, key, offset, op.count, &acc); rc != ncclSuccess) return rc;
            std::memcpy(op.recvbuff, acc.data(), acc.size());
            return ncclSuccess;
        }
        case Operation::AllGather:
            return deliver_all_gather(op, key);
        case Operation::Broadcast:
            return deliver_copy(op, key, op.root);
        case Operation::Recv:
            return deliver_copy(op, key, op.peer);
        case Operation::Send:
            return ncclSuccess;
    }
    return ncclSuccess;
}

}  // namespace tbdsim::nccl
