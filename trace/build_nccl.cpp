#include "build_nccl.h"

namespace tbdprof::trace::detail {
namespace {

using raw::LibraryOp;

// The collective's name in nccl_calls: its op in library_calls without the "nccl_" prefix.
std::string_view op_name(LibraryOp op) {
    return nccl_library_op(op).substr(std::string_view("nccl_").size());
}

// ncclDataType_t values (nccl.h) by name, with the element size.
struct DataType {
    std::string_view name;
    int64_t bytes;
};
DataType data_type(uint8_t value) {
    constexpr DataType kTypes[] = {{"int8", 1},    {"uint8", 1},    {"int32", 4},      {"uint32", 4},
                                   {"int64", 8},   {"uint64", 8},   {"float16", 2},    {"float32", 4},
                                   {"float64", 8}, {"bfloat16", 2}, {"float8e4m3", 1}, {"float8e5m2", 1}};
    return value < std::size(kTypes) ? kTypes[value] : DataType{"other", 0};
}

std::optional<std::string_view> reduction(const raw::RawLibraryCall& c) {
    if (c.op != LibraryOp::NcclAllReduce && c.op != LibraryOp::NcclReduceScatter && c.op != LibraryOp::NcclReduce)
        return std::nullopt;
    constexpr std::string_view kNames[] = {"sum", "prod", "max", "min", "avg"};
    return c.compute_type < std::size(kNames) ? kNames[c.compute_type] : std::string_view("premulsum");
}

Opt known(int64_t value) {
    return value >= 0 ? Opt(value) : Opt();
}

// A handle NCCL reused after a destroy names the communicator created last before the call.
Opt communicator_identity(const std::vector<Event<raw::RawNcclComm>>& comms, uint64_t handle, uint64_t at_host_ns) {
    Opt identity;
    uint64_t latest_ns = 0;
    for (const Event<raw::RawNcclComm>& e : comms) {
        const raw::RawNcclComm& r = e.record;
        if (r.communicator != handle || r.host_ns > at_host_ns || (identity && r.host_ns < latest_ns)) continue;
        identity = static_cast<int64_t>(r.identity);  // stored as SQLite's signed 64-bit integer
        latest_ns = r.host_ns;
    }
    return identity;
}

}  // namespace

bool is_nccl_op(LibraryOp op) {
    return op >= LibraryOp::NcclAllReduce && op <= LibraryOp::NcclGroupEnd;
}

std::string_view nccl_library_op(LibraryOp op) {
    switch (op) {
        case LibraryOp::NcclAllReduce:
            return "nccl_all_reduce";
        case LibraryOp::NcclReduceScatter:
            return "nccl_reduce_scatter";
        case LibraryOp::NcclAllGather:
            return "nccl_all_gather";
        case LibraryOp::NcclBroadcast:
            return "nccl_broadcast";
        case LibraryOp::NcclReduce:
            return "nccl_reduce";
        case LibraryOp::NcclSend:
            return "nccl_send";
        case LibraryOp::NcclRecv:
            return "nccl_recv";
        default:
            return "nccl_group_end";
    }
}

std::optional<NcclCallRow> nccl_call_row(int64_t library_call, int64_t process, const raw::RawLibraryCall& c,
                                         const std::vector<Event<raw::RawNcclComm>>& comms) {
    if (!is_nccl_op(c.op) || c.op == LibraryOp::NcclGroupEnd) return std::nullopt;
    const DataType type = data_type(c.a_type);
    const bool p2p = c.op == LibraryOp::NcclSend || c.op == LibraryOp::NcclRecv;
    const bool rooted = c.op == LibraryOp::NcclBroadcast || c.op == LibraryOp::NcclReduce;
    return NcclCallRow{library_call,
                       process,
                       op_name(c.op),
                       static_cast<int64_t>(c.workspace),
                       known(c.k),
                       known(c.n),
                       c.m,
                       type.name,
                       c.m * type.bytes,
                       reduction(c),
                       p2p ? Opt(c.batch) : Opt(),
                       rooted ? Opt(c.batch) : Opt(),
                       static_cast<int64_t>(c.stream),
                       communicator_identity(comms, c.workspace, c.begin_host_ns)};
}

}  // namespace tbdprof::trace::detail
