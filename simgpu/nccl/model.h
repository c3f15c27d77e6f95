// The simulated NCCL's cost model (docs/simgpu-nccl.md): for each operation, the algorithm (ring or
// tree) and protocol (LL, LL128, Simple) with the shortest modelled time, as NCCL's tuner picks, and
// the kernel name NCCL 2.19+ gives that choice.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string>

namespace tbdsim::nccl {

enum class Operation { AllReduce, ReduceScatter, AllGather, Broadcast, Reduce, Send, Recv };

const char* operation_name(Operation op);  // "AllReduce", ... as NCCL spells it in kernel names
bool has_reduction(Operation op);

// Bus bandwidth between the GPUs of one node, by device name (NVLink generation, or PCIe).
double bus_bandwidth_bytes_per_s(const char* device_name);

struct Choice {
    const char* algorithm = "RING";
    const char* protocol = "SIMPLE";
    uint64_t duration_ns = 0;
};

// `bytes` as NCCL's own tests count them: the send (AllReduce, Reduce, Broadcast, ReduceScatter's
// input) or receive (AllGather) buffer of one rank.
Choice choose(Operation op, uint64_t bytes, int nranks, double bus_bytes_per_s);

std::string kernel_name(Operation op, ncclRedOp_t redop, ncclDataType_t type, const Choice& choice);

size_t type_size_bytes(ncclDataType_t type);  // 0 for an unknown type
const char* type_kernel_name(ncclDataType_t type);
const char* type_name(ncclDataType_t type);  // "ncclFloat32", ...
const char* redop_name(ncclRedOp_t op);      // "ncclSum", ...; "ncclPreMulSum" for user-created ones

}  // namespace tbdsim::nccl
