// Communicator creation, queries and teardown (the nccl.h functions of that part).
#include "comm.h"
#include "profiling_alias.h"

#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <tuple>

#include "driver_link.h"
#include "group.h"
#include "model.h"
#include "truth.h"

namespace tbdsim::nccl {
namespace {

constexpr char kMagic[] = "tbdsim-nccl-id";  // first bytes of our unique ids
thread_local std::string t_last_error;

ncclResult_t fail(ncclResult_t rc, const std::string& text) {
    set_last_error(text);
    return rc;
}

// The device the calling thread works on: the current context's, else device 0 (as NCCL's
// cudaGetDevice would report with no device set).
int current_device(const Driver& d) {
    CUdevice device = 0;
    if (d.base->init(0) != CUDA_SUCCESS || d.ctx_get_device(&device) != CUDA_SUCCESS) return 0;
    return int(device);
}

}  // namespace

void set_last_error(const std::string& text) {
    t_last_error = text;
}
const std::string& last_error() {
    return t_last_error;
}

bool segment_name(const ncclUniqueId& id, std::string* name) {
    if (std::memcmp(id.internal, kMagic, sizeof kMagic) != 0) return false;
    char text[64];
    const auto* random = reinterpret_cast<const unsigned char*>(id.internal + 16);
    int n = std::snprintf(text, sizeof text, "/tbdsim-nccl-");
    for (int i = 0; i < 16; ++i) n += std::snprintf(text + n, sizeof text - size_t(n), "%02x", random[i]);
    *name = text;
    return true;
}

ncclResult_t create_comm(const std::string& name, int nranks, int rank, int device, ncclComm** out) {
    const Driver* d = driver();
    if (d == nullptr) return fail(ncclUnhandledCudaError, "the simulated driver is not available");
    Rendezvous* rendezvous = nullptr;
    ncclResult_t rc = Rendezvous::attach(name, nranks, &rendezvous);
    if (rc == ncclInvalidArgument) return fail(rc, "ranks of one unique id disagree on the number of ranks");
    if (rc != ncclSuccess) return fail(rc, "cannot map the communicator's shared memory");
    auto* comm = new ncclComm;
    comm->rendezvous = rendezvous;
    comm->name = name;
    comm->rank = rank;
    comm->nranks = nranks;
    comm->device = device;
    char device_name[256] = {};
    CUdevice handle = 0;
    if (d->base->device_get(&handle, device) == CUDA_SUCCESS)
        d->device_get_name(device_name, sizeof device_name, handle);
    comm->bus_bytes_per_s = bus_bandwidth_bytes_per_s(device_name);
    comm->send_seq.assign(size_t(nranks), 0);
    comm->recv_seq.assign(size_t(nranks), 0);
    rendezvous->join();
    truth_write_comm(*comm);
    *out = comm;
    return ncclSuccess;
}

void destroy_comm(ncclComm* comm) {
    comm->rendezvous->detach();
    delete comm;
}

}  // namespace tbdsim::nccl

using namespace tbdsim::nccl;

// The nccl.h entry points: exported (the library builds with hidden visibility).
#pragma GCC visibility push(default)
extern "C" {

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
    if (id == nullptr) return fail(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
    std::memset(id, 0, sizeof *id);
    std::memcpy(id->internal, kMagic, sizeof kMagic);
    if (getrandom(id->internal + 16, 16, 0) != 16) return fail(ncclSystemError, "getrandom failed");
    return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t*) {
    if (comm == nullptr || nranks < 1 || rank < 0 || rank >= nranks)
        return fail(ncclInvalidArgument, "ncclCommInitRank: invalid comm pointer, nranks or rank");
    std::string name;
    if (!segment_name(id, &name)) return fail(ncclInvalidArgument, "ncclCommInitRank: not a unique id of this NCCL");
    const Driver* d = driver();
    if (d == nullptr) return fail(ncclUnhandledCudaError, "the simulated driver is not available");
    ncclComm* created = nullptr;
    if (ncclResult_t rc = create_comm(name, nranks, rank, current_device(*d), &created); rc != ncclSuccess) return rc;
    if (in_group()) {
        created->joined_pending = true;  // the other ranks may be initialized by this thread later in the group
        defer_join(created);
    } else if (ncclResult_t rc = created->rendezvous->wait_joined(); rc != ncclSuccess) {
        destroy_comm(created);
        return rc;
    }
    *comm = created;
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank) {
    return ncclCommInitRankConfig(comm, nranks, id, rank, nullptr);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
    const Driver* d = driver();
    if (d == nullptr) return fail(ncclUnhandledCudaError, "the simulated driver is not available");
    int count = 0;
    if (comms == nullptr || ndev < 1 || d->base->init(0) != CUDA_SUCCESS || d->device_get_count(&count) != CUDA_SUCCESS)
        return fail(ncclInvalidArgument, "ncclCommInitAll: invalid arguments");
    for (int i = 0; i < ndev; ++i) {
        const int device = devlist != nullptr ? devlist[i] : i;
        if (device < 0 || device >= count) return fail(ncclInvalidArgument, "ncclCommInitAll: no such device");
    }
    ncclUniqueId id;
    std::string name;
    if (ncclResult_t rc = ncclGetUniqueId(&id); rc != ncclSuccess) return rc;
    segment_name(id, &name);
    for (int i = 0; i < ndev; ++i) {
        if (ncclResult_t rc = create_comm(name, ndev, i, devlist != nullptr ? devlist[i] : i, &comms[i]);
            rc != ncclSuccess) {
            while (i-- > 0) destroy_comm(comms[i]);
            return rc;
        }
    }
    return ncclSuccess;  // every rank joined on this thread: nothing to wait for
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t*) {
    if (comm == nullptr || newcomm == nullptr) return fail(ncclInvalidArgument, "ncclCommSplit: NULL argument");
    Rendezvous& parent = *comm->rendezvous;
    parent.rank(comm->rank).split_color.store(color);
    parent.rank(comm->rank).split_key.store(key);
    if (ncclResult_t rc = parent.barrier(comm->rank, ++comm->barrier_seq); rc != ncclSuccess) return rc;
    std::vector<std::tuple<int, int>> members;  // (key, parent rank) of this color
    for (int r = 0; r < comm->nranks; ++r)
        if (parent.rank(r).split_color.load() == color) members.emplace_back(parent.rank(r).split_key.load(), r);
    // A second barrier before anyone may overwrite its color for a later split.
    if (ncclResult_t rc = parent.barrier(comm->rank, ++comm->barrier_seq); rc != ncclSuccess) return rc;
    const uint64_t split = ++comm->split_seq;
    *newcomm = nullptr;
    if (color == NCCL_SPLIT_NOCOLOR) return ncclSuccess;
    std::sort(members.begin(), members.end());
    int new_rank = 0;
    while (std::get<1>(members[size_t(new_rank)]) != comm->rank) ++new_rank;
    const std::string name = comm->name + "-" + std::to_string(split) + "-" + std::to_string(color);
    ncclComm* created = nullptr;
    if (ncclResult_t rc = create_comm(name, int(members.size()), new_rank, comm->device, &created); rc != ncclSuccess)
        return rc;
    if (ncclResult_t rc = created->rendezvous->wait_joined(); rc != ncclSuccess) {
        destroy_comm(created);
        return rc;
    }
    *newcomm = created;
    return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
    return comm != nullptr ? ncclSuccess : fail(ncclInvalidArgument, "ncclCommFinalize: NULL comm");
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    if (comm != nullptr) destroy_comm(comm);
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
    if (comm == nullptr) return ncclSuccess;
    comm->rendezvous->abort();  // the other ranks stop waiting for this one
    destroy_comm(comm);
    return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
    if (comm == nullptr || error == nullptr) return fail(ncclInvalidArgument, "ncclCommGetAsyncError: NULL argument");
    *error = comm->rendezvous == nullptr ? ncclInternalError : ncclSuccess;
    return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
    if (comm == nullptr || count == nullptr) return fail(ncclInvalidArgument, "ncclCommCount: NULL argument");
    *count = comm->nranks;
    return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
    if (comm == nullptr || device == nullptr) return fail(ncclInvalidArgument, "ncclCommCuDevice: NULL argument");
    *device = comm->device;
    return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
    if (comm == nullptr || rank == nullptr) return fail(ncclInvalidArgument, "ncclCommUserRank: NULL argument");
    *rank = comm->rank;
    return ncclSuccess;
}

}  // extern "C"
#pragma GCC visibility pop

TBDSIM_NCCL_PROFILING_ALIAS(ncclGetUniqueId)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommInitRankConfig)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommInitRank)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommInitAll)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommSplit)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommFinalize)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommDestroy)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommAbort)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommGetAsyncError)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommCount)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommCuDevice)
TBDSIM_NCCL_PROFILING_ALIAS(ncclCommUserRank)
