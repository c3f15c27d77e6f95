#include "model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tbdsim::nccl {
namespace {

constexpr double kBaseNs = 4000;  // setting up the kernel's work, whatever the size

struct Protocol {
    const char* name;
    double step_ns;     // one hop between neighbours
    double efficiency;  // share of the bus bandwidth the protocol's wire format carries as data
};
// LL carries 4 bytes of data per 8 (a flag with each word), LL128 120 of 128, Simple all of it but
// synchronizes with more latency per step.
constexpr Protocol kProtocols[] = {{"LL", 600, 0.5}, {"LL128", 1000, 0.9375}, {"SIMPLE", 2500, 1.0}};

// Ring: data that crosses the bus per byte of buffer, and the number of steps.
double ring_factor(Operation op, int n) {
    switch (op) {
        case Operation::AllReduce:
            return 2.0 * (n - 1) / n;
        case Operation::ReduceScatter:
        case Operation::AllGather:
            return double(n - 1) / n;
        default:
            return n > 1 ? 1.0 : 0.0;
    }
}
int ring_steps(Operation op, int n) {
    return op == Operation::AllReduce ? 2 * (n - 1) : n - 1;
}

uint64_t duration(double bytes, double factor, int steps, const Protocol& p, double bus) {
    return static_cast<uint64_t>(
        std::llround(kBaseNs + steps * p.step_ns + bytes * factor / (bus * p.efficiency) * 1e9));
}

}  // namespace

const char* operation_name(Operation op) {
    switch (op) {
        case Operation::AllReduce:
            return "AllReduce";
        case Operation::ReduceScatter:
            return "ReduceScatter";
        case Operation::AllGather:
            return "AllGather";
        case Operation::Broadcast:
            return "Broadcast";
        case Operation::Reduce:
            return "Reduce";
        case Operation::Send:
            return "Send";
        case Operation::Recv:
            return "Recv";
    }
    return "?";
}

bool has_reduction(Operation op) {
    return op == Operation::AllReduce || op == Operation::ReduceScatter || op == Operation::Reduce;
}

double bus_bandwidth_bytes_per_s(const char* device_name) {
    // What NCCL's tests reach on 8 GPUs of one node (bus bandwidth), by interconnect: NVLink 4
    // (H100/H200, 450 GB/s per direction), NVLink 3 (A100, 300), NVLink 2 (V100, 150), else PCIe 4.
    const char* name = device_name != nullptr ? device_name : "";
    if (std::strstr(name, "H100") || std::strstr(name, "H200")) return 370e9;
    if (std::strstr(name, "A100")) return 230e9;
    if (std::strstr(name, "V100")) return 130e9;
    return 20e9;
}

Choice choose(Operation op, uint64_t bytes, int nranks, double bus) {
    const int n = std::max(nranks, 1);
    Choice best;
    best.duration_ns = UINT64_MAX;
    if (op == Operation::Send || op == Operation::Recv) {
        const Protocol& p = bytes < 64 * 1024 ? kProtocols[0] : kProtocols[2];
        return {"RING", p.name, duration(double(bytes), 1.0, 1, p, bus)};
    }
    for (const Protocol& p : kProtocols) {
        uint64_t ring = duration(double(bytes), ring_factor(op, n), ring_steps(op, n), p, bus);
        if (ring < best.duration_ns) best = {"RING", p.name, ring};
        if (op != Operation::AllReduce || n < 3) continue;
        // Tree: up the tree and down again, log2(n) hops each way; every byte crosses twice.
        int depth = static_cast<int>(std::ceil(std::log2(double(n))));
        uint64_t tree = duration(double(bytes), 2.0, 2 * depth, p, bus);
        if (tree < best.duration_ns) best = {"TREE", p.name, tree};
    }
    return best;
}

size_t type_size_bytes(ncclDataType_t type) {
    switch (type) {
        case ncclInt8:
        case ncclUint8:
        case ncclFloat8e4m3:
        case ncclFloat8e5m2:
            return 1;
        case ncclFloat16:
        case ncclBfloat16:
            return 2;
        case ncclInt32:
        case ncclUint32:
        case ncclFloat32:
            return 4;
        case ncclInt64:
        case ncclUint64:
        case ncclFloat64:
            return 8;
        default:
            return 0;
    }
}

const char* type_kernel_name(ncclDataType_t type) {
    switch (type) {
        case ncclInt8:
            return "i8";
        case ncclUint8:
            return "u8";
        case ncclInt32:
            return "i32";
        case ncclUint32:
            return "u32";
        case ncclInt64:
            return "i64";
        case ncclUint64:
            return "u64";
        case ncclFloat16:
            return "f16";
        case ncclFloat32:
            return "f32";
        case ncclFloat64:
            return "f64";
        case ncclBfloat16:
            return "bf16";
        case ncclFloat8e4m3:
            return "f8e4m3";
        case ncclFloat8e5m2:
            return "f8e5m2";
        default:
            return "?";
    }
}

const char* type_name(ncclDataType_t type) {
    switch (type) {
        case ncclInt8:
            return "ncclInt8";
        case ncclUint8:
            return "ncclUint8";
        case ncclInt32:
            return "ncclInt32";
        case ncclUint32:
            return "ncclUint32";
        case ncclInt64:
            return "ncclInt64";
        case ncclUint64:
            return "ncclUint64";
        case ncclFloat16:
            return "ncclFloat16";
        case ncclFloat32:
            return "ncclFloat32";
        case ncclFloat64:
            return "ncclFloat64";
        case ncclBfloat16:
            return "ncclBfloat16";
        case ncclFloat8e4m3:
            return "ncclFloat8e4m3";
        case ncclFloat8e5m2:
            return "ncclFloat8e5m2";
        default:
            return "?";
    }
}

const char* redop_name(ncclRedOp_t op) {
    switch (op) {
        case ncclSum:
            return "ncclSum";
        case ncclProd:
            return "ncclProd";
        case ncclMax:
            return "ncclMax";
        case ncclMin:
            return "ncclMin";
        case ncclAvg:
            return "ncclAvg";
        default:
            return "ncclPreMulSum";
    }
}

std::string kernel_name(Operation op, ncclRedOp_t redop, ncclDataType_t type, const Choice& choice) {
    if (op == Operation::Send || op == Operation::Recv) return "ncclDevKernel_SendRecv";
    std::string name = std::string("ncclDevKernel_") + operation_name(op);
    if (has_reduction(op)) {
        const bool is_float = type == ncclFloat16 || type == ncclFloat32 || type == ncclFloat64 ||
                              type == ncclBfloat16 || type == ncclFloat8e4m3 || type == ncclFloat8e5m2;
        const char* reduction = redop == ncclSum                       ? "Sum"
                                : redop == ncclProd                    ? "Prod"
                                : redop == ncclMax || redop == ncclMin ? "MinMax"
                                : redop == ncclAvg && !is_float        ? "SumPostDiv"
                                                                       : "PreMulSum";
        name += std::string("_") + reduction + "_" + type_kernel_name(type);
    }
    // Only AllReduce has tree kernels; the choice says TREE only for it.
    return name + "_" + choice.algorithm + "_" + choice.protocol;
}

}  // namespace tbdsim::nccl
