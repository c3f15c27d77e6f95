// NCCL communicator creation, recorded as RawNcclComm with an identity that every rank of the new
// communicator computes alike from what NCCL's public API gave it, so that traces of different ranks
// can tell apart communicators of the same size issuing the same calls (docs/fleet.md):
// - ncclCommInitRank(Config): the ranks pass the same ncclUniqueId; identity = a hash of its bytes
//   (the bytes themselves are not kept: they may hold an address to connect to).
// - ncclCommSplit: the ranks passing one color on one parent form one communicator; NCCL requires
//   every rank of the parent to call it, in the same order, so identity = a hash of (the parent's
//   identity, the number of this split on the parent, the color). NCCL_SPLIT_NOCOLOR creates none.
// - ncclCommInitAll: one process holds all the ranks; identity = a hash of (process, call number).
// The real function runs first; only a communicator it created is recorded, always (as allocations
// are, not only inside capture windows: a window's calls need the communicator created before it).
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "library_call.h"
#include "nccl_comm.h"
#include "tbdprof/collector/session.h"

namespace tbdprof::preload {
namespace {

using InitRankFn = ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int);
using InitRankConfigFn = ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*);
using InitAllFn = ncclResult_t (*)(ncclComm_t*, int, const int*);
using SplitFn = ncclResult_t (*)(ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*);

LibraryFunction<InitRankFn> real_init_rank{"ncclCommInitRank"};
LibraryFunction<InitRankConfigFn> real_init_rank_config{"ncclCommInitRankConfig"};
LibraryFunction<InitAllFn> real_init_all{"ncclCommInitAll"};
LibraryFunction<SplitFn> real_split{"ncclCommSplit"};

constexpr uint64_t kFnvBasis = 14695981039346656037ULL;

uint64_t fnv(uint64_t hash, const void* bytes, size_t n) {
    const auto* p = static_cast<const unsigned char*>(bytes);
    for (size_t i = 0; i < n; ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
    return hash;
}

uint64_t fnv_value(uint64_t hash, uint64_t value) {
    return fnv(hash, &value, sizeof(value));
}

struct KnownComm {
    uint64_t identity = 0;
    uint64_t splits = 0;  // successful ncclCommSplit calls made on it so far (this rank's count)
};

// The communicators this process created, by handle: a split's identity needs its parent's. A
// handle NCCL reuses after a destroy is overwritten by the next creation that returns it.
std::mutex known_mutex;
std::unordered_map<uint64_t, KnownComm>& known() {
    static auto* map = new std::unordered_map<uint64_t, KnownComm>();  // never destroyed: hooks run at exit
    return *map;
}

// The nested call of a wrapper (a library whose InitRank calls its own exported InitRankConfig)
// belongs to the outer one.
thread_local int creating_depth = 0;

struct DepthGuard {
    DepthGuard() { ++creating_depth; }
    ~DepthGuard() { --creating_depth; }
};

void remember_and_record(ncclComm_t comm, uint64_t identity, raw::NcclCommOrigin origin, const void* served_by) {
    if (comm == nullptr) return;
    {
        std::lock_guard lock(known_mutex);
        known()[reinterpret_cast<uint64_t>(comm)] = {identity, 0};
    }
    if (!collector::collector_enabled()) return;
    collector::ensure_session();
    raw::RawNcclComm r{};
    r.host_ns = collector::host_monotonic_ns();
    r.communicator = reinterpret_cast<uint64_t>(comm);
    r.identity = identity;
    r.rank = nccl_comm_rank(served_by, comm);
    r.nranks = nccl_comm_count(served_by, comm);
    r.origin = origin;
    collector::emit_record(collector::thread_state(), raw::RecordKind::NcclComm, r);
}

// A created communicator's status: ncclInProgress (a non-blocking config) has a handle too.
bool created(ncclResult_t status, const ncclComm_t* comm) {
    return (status == ncclSuccess || status == ncclInProgress) && comm != nullptr && *comm != nullptr;
}

uint64_t unique_id_identity(const ncclUniqueId& id) {
    return fnv(kFnvBasis, id.internal, sizeof(id.internal));
}

// The identity of the communicator a split with `color` makes of `parent` (counting the split on the
// parent, NOCOLOR included); false when the parent was not created under the collector.
bool nccl_split_identity(ncclComm_t parent, int color, uint64_t* identity) {
    std::lock_guard lock(known_mutex);
    const auto found = known().find(reinterpret_cast<uint64_t>(parent));
    if (found == known().end()) return false;
    const uint64_t number = ++found->second.splits;
    uint64_t hash = fnv_value(kFnvBasis, found->second.identity);
    hash = fnv_value(hash, number);
    *identity = fnv_value(hash, static_cast<uint64_t>(static_cast<int64_t>(color)));
    return true;
}

}  // namespace

}  // namespace tbdprof::preload

namespace nccl_comm_hooks = tbdprof::preload;
using CommOrigin = tbdprof::raw::NcclCommOrigin;

extern "C" TBD_VISIBLE ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                                           ncclConfig_t* config) {
    auto real = nccl_comm_hooks::real_init_rank_config.get();
    if (real == nullptr) return ncclSystemError;
    const nccl_comm_hooks::DepthGuard depth;
    const ncclResult_t status = real(comm, nranks, id, rank, config);
    if (nccl_comm_hooks::creating_depth == 1 && nccl_comm_hooks::created(status, comm))
        nccl_comm_hooks::remember_and_record(*comm, nccl_comm_hooks::unique_id_identity(id), CommOrigin::InitRank,
                                             reinterpret_cast<const void*>(real));
    return status;
}

extern "C" TBD_VISIBLE ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
    auto real = nccl_comm_hooks::real_init_rank.get();
    if (real == nullptr) return ncclSystemError;
    const nccl_comm_hooks::DepthGuard depth;
    const ncclResult_t status = real(comm, nranks, id, rank);
    if (nccl_comm_hooks::creating_depth == 1 && nccl_comm_hooks::created(status, comm))
        nccl_comm_hooks::remember_and_record(*comm, nccl_comm_hooks::unique_id_identity(id), CommOrigin::InitRank,
                                             reinterpret_cast<const void*>(real));
    return status;
}

extern "C" TBD_VISIBLE ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
    auto real = nccl_comm_hooks::real_init_all.get();
    if (real == nullptr) return ncclSystemError;
    const nccl_comm_hooks::DepthGuard depth;
    const ncclResult_t status = real(comms, ndev, devlist);
    if (nccl_comm_hooks::creating_depth != 1 || status != ncclSuccess || comms == nullptr) return status;
    // Process-local: the pid, the moment and the call's number tell it from other processes' calls.
    static std::atomic<uint64_t> calls{0};
    uint64_t identity = nccl_comm_hooks::fnv_value(nccl_comm_hooks::kFnvBasis, static_cast<uint64_t>(getpid()));
    identity = nccl_comm_hooks::fnv_value(identity, tbdprof::collector::host_monotonic_ns());
    identity = nccl_comm_hooks::fnv_value(identity, ++calls);
    for (int i = 0; i < ndev; ++i)
        nccl_comm_hooks::remember_and_record(comms[i], identity, CommOrigin::InitAll,
                                             reinterpret_cast<const void*>(real));
    return status;
}

extern "C" TBD_VISIBLE ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                                  ncclConfig_t* config) {
    auto real = nccl_comm_hooks::real_split.get();
    if (real == nullptr) return ncclSystemError;
    const nccl_comm_hooks::DepthGuard depth;
    const ncclResult_t status = real(comm, color, key, newcomm, config);
    if (nccl_comm_hooks::creating_depth != 1 || (status != ncclSuccess && status != ncclInProgress)) return status;
    uint64_t identity = 0;
    if (!nccl_comm_hooks::nccl_split_identity(comm, color, &identity)) return status;
    if (color != NCCL_SPLIT_NOCOLOR && nccl_comm_hooks::created(status, newcomm))
        nccl_comm_hooks::remember_and_record(*newcomm, identity, CommOrigin::Split,
                                             reinterpret_cast<const void*>(real));
    return status;
}

namespace tbdprof::preload {

void* substitute_nccl_comm_symbol(const char* name, void* result) {
    if (std::strncmp(name, "ncclComm", 8) != 0) return nullptr;
    auto take = [&](auto& real, auto ours) -> void* { return substitute_library_function(real, ours, result); };
    if (std::strcmp(name, "ncclCommInitRank") == 0) return take(real_init_rank, &ncclCommInitRank);
    if (std::strcmp(name, "ncclCommInitRankConfig") == 0) return take(real_init_rank_config, &ncclCommInitRankConfig);
    if (std::strcmp(name, "ncclCommInitAll") == 0) return take(real_init_all, &ncclCommInitAll);
    if (std::strcmp(name, "ncclCommSplit") == 0) return take(real_split, &ncclCommSplit);
    return nullptr;
}

}  // namespace tbdprof::preload
