// Where the ranks of one communicator meet: a POSIX shared-memory segment named after the unique id,
// mapped by every rank, whether the ranks are threads of one process or separate processes (one
// host). Each rank posts the device time at which its stream reaches an operation; an operation ends
// on every rank after the latest of those times (docs/simgpu-nccl.md). All fields are lock-free
// atomics, so the segment needs no initialization beyond the zeros ftruncate gives it.
#pragma once

#include <nccl.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace tbdsim::nccl {

constexpr int kSlots = 8;  // operations a rank may post ahead of a peer reading them

struct RankSlot {
    std::atomic<uint64_t> collective_seq;
    std::atomic<uint64_t> collective_arrival_ns[kSlots];
    std::atomic<uint64_t> barrier_seq;
    std::atomic<int32_t> split_color, split_key;
};

struct PairSlot {  // sender -> receiver
    std::atomic<uint64_t> send_seq, recv_seq;
    std::atomic<uint64_t> send_arrival_ns[kSlots], recv_arrival_ns[kSlots];
};

struct SegmentHeader {
    std::atomic<int32_t> nranks;  // set by the first rank to attach
    std::atomic<int32_t> joined;
    std::atomic<int32_t> aborted;
    std::atomic<int32_t> detached;
};

class Rendezvous {
public:
    // Maps the segment `name` for a communicator of `nranks`; ncclInvalidArgument when another rank
    // attached with a different size, ncclSystemError when shared memory fails.
    static ncclResult_t attach(const std::string& name, int nranks, Rendezvous** out);
    // Counts this rank in; the last rank to join removes the name (everyone has it mapped then).
    void join();
    // Waits until all ranks joined (communicator initialization).
    ncclResult_t wait_joined() const;
    void detach();  // unmaps; the object is gone afterwards
    void abort() { header_->aborted.store(1); }

    int nranks() const { return nranks_; }
    RankSlot& rank(int r) const { return ranks_[r]; }
    PairSlot& pair(int from, int to) const { return pairs_[from * nranks_ + to]; }

    void post_collective(int rank, uint64_t seq, uint64_t arrival_ns) const;
    // The latest arrival of all ranks at collective `seq`.
    ncclResult_t wait_collective(uint64_t seq, uint64_t* latest_arrival_ns) const;
    void post_send(int from, int to, uint64_t seq, uint64_t arrival_ns) const;
    void post_recv(int from, int to, uint64_t seq, uint64_t arrival_ns) const;
    // The other side's arrival: a sender waits for the receive, a receiver for the send.
    ncclResult_t wait_recv(int from, int to, uint64_t seq, uint64_t* peer_arrival_ns) const;
    ncclResult_t wait_send(int from, int to, uint64_t seq, uint64_t* peer_arrival_ns) const;
    // Every rank waits here for the others (split exchanges colors and keys around it).
    ncclResult_t barrier(int rank, uint64_t seq) const;

private:
    template <typename Ready>
    ncclResult_t wait_for(const char* what, Ready ready) const;

    std::string name_;
    void* base_ = nullptr;
    size_t bytes_ = 0;
    int nranks_ = 0;
    SegmentHeader* header_ = nullptr;
    RankSlot* ranks_ = nullptr;
    PairSlot* pairs_ = nullptr;
};

}  // namespace tbdsim::nccl
