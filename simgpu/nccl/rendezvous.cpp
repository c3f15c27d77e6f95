#include "rendezvous.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>

namespace tbdsim::nccl {
namespace {

size_t segment_bytes(int nranks) {
    return sizeof(SegmentHeader) + sizeof(RankSlot) * size_t(nranks) +
           sizeof(PairSlot) * size_t(nranks) * size_t(nranks);
}

// A rank that never arrives would hang the others forever, as with the real NCCL; the simulator
// gives up after TBDSIM_NCCL_TIMEOUT_S seconds (default 300) so that a broken test fails instead.
double timeout_s() {
    static const double seconds = [] {
        const char* text = std::getenv("TBDSIM_NCCL_TIMEOUT_S");
        double value = text ? std::atof(text) : 0;
        return value > 0 ? value : 300.0;
    }();
    return seconds;
}

double monotonic_s() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

ncclResult_t Rendezvous::attach(const std::string& name, int nranks, Rendezvous** out) {
    const size_t bytes = segment_bytes(nranks);
    int fd = shm_open(name.c_str(), O_RDWR | O_CREAT, 0600);
    if (fd < 0) return ncclSystemError;
    struct stat st {};
    // Only ever grow it: a rank that asks for fewer ranks must not cut the others' mapping.
    if (fstat(fd, &st) != 0 || (size_t(st.st_size) < bytes && ftruncate(fd, off_t(bytes)) != 0)) {
        close(fd);
        return ncclSystemError;
    }
    void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) return ncclSystemError;
    auto* r = new Rendezvous;
    r->name_ = name;
    r->base_ = base;
    r->bytes_ = bytes;
    r->nranks_ = nranks;
    r->header_ = static_cast<SegmentHeader*>(base);
    r->ranks_ = reinterpret_cast<RankSlot*>(static_cast<char*>(base) + sizeof(SegmentHeader));
    r->pairs_ = reinterpret_cast<PairSlot*>(r->ranks_ + nranks);
    int32_t expected = 0;
    if (!r->header_->nranks.compare_exchange_strong(expected, nranks) && expected != nranks) {
        munmap(base, bytes);
        delete r;
        return ncclInvalidArgument;
    }
    *out = r;
    return ncclSuccess;
}

void Rendezvous::join() {
    if (header_->joined.fetch_add(1) + 1 == nranks_) shm_unlink(name_.c_str());
}

ncclResult_t Rendezvous::wait_joined() const {
    return wait_for("the other ranks to initialize", [&] { return header_->joined.load() >= nranks_; });
}

void Rendezvous::detach() {
    if (header_->joined.load() < nranks_) shm_unlink(name_.c_str());  // never completed: nobody else needs it
    munmap(base_, bytes_);
    delete this;
}

template <typename Ready>
ncclResult_t Rendezvous::wait_for(const char* what, Ready ready) const {
    const double deadline = monotonic_s() + timeout_s();
    long sleep_ns = 1000;
    while (!ready()) {
        if (header_->aborted.load() != 0) return ncclRemoteError;
        if (monotonic_s() > deadline) {
            std::fprintf(stderr, "tbdsim NCCL: gave up waiting for %s after %.0f s (TBDSIM_NCCL_TIMEOUT_S)\n", what,
                         timeout_s());
            return ncclSystemError;
        }
        timespec pause{0, sleep_ns};
        nanosleep(&pause, nullptr);
        sleep_ns = std::min(sleep_ns * 2, 200000L);
    }
    return ncclSuccess;
}

void Rendezvous::post_collective(int rank, uint64_t seq, uint64_t arrival_ns) const {
    ranks_[rank].collective_arrival_ns[seq % kSlots].store(arrival_ns);
    ranks_[rank].collective_seq.store(seq);
}

ncclResult_t Rendezvous::wait_collective(uint64_t seq, uint64_t* latest_arrival_ns) const {
    ncclResult_t rc = wait_for("every rank to reach a collective", [&] {
        for (int r = 0; r < nranks_; ++r)
            if (ranks_[r].collective_seq.load() < seq) return false;
        return true;
    });
    if (rc != ncclSuccess) return rc;
    uint64_t latest = 0;
    for (int r = 0; r < nranks_; ++r) latest = std::max(latest, ranks_[r].collective_arrival_ns[seq % kSlots].load());
    *latest_arrival_ns = latest;
    return ncclSuccess;
}

void Rendezvous::post_send(int from, int to, uint64_t seq, uint64_t arrival_ns) const {
    pair(from, to).send_arrival_ns[seq % kSlots].store(arrival_ns);
    pair(from, to).send_seq.store(seq);
}

void Rendezvous::post_recv(int from, int to, uint64_t seq, uint64_t arrival_ns) const {
    pair(from, to).recv_arrival_ns[seq % kSlots].store(arrival_ns);
    pair(from, to).recv_seq.store(seq);
}

ncclResult_t Rendezvous::wait_recv(int from, int to, uint64_t seq, uint64_t* peer_arrival_ns) const {
    PairSlot& p = pair(from, to);
    ncclResult_t rc = wait_for("the peer's ncclRecv", [&] { return p.recv_seq.load() >= seq; });
    if (rc == ncclSuccess) *peer_arrival_ns = p.recv_arrival_ns[seq % kSlots].load();
    return rc;
}

ncclResult_t Rendezvous::wait_send(int from, int to, uint64_t seq, uint64_t* peer_arrival_ns) const {
    PairSlot& p = pair(from, to);
    ncclResult_t rc = wait_for("the peer's ncclSend", [&] { return p.send_seq.load() >= seq; });
    if (rc == ncclSuccess) *peer_arrival_ns = p.send_arrival_ns[seq % kSlots].load();
    return rc;
}

ncclResult_t Rendezvous::barrier(int rank, uint64_t seq) const {
    ranks_[rank].barrier_seq.store(seq);
    return wait_for("every rank at a communicator barrier", [&] {
        for (int r = 0; r < nranks_; ++r)
            if (ranks_[r].barrier_seq.load() < seq) return false;
        return true;
    });
}

}  // namespace tbdsim::nccl
