// TBDSIM_CUDNN_BACKEND_LOG=1: the simulated cuDNN prints every operation graph it is asked to
// finalize to stderr, operation by operation with each attribute (tensors with their unique id,
// data type, dimensions, strides and virtual / by-value flags; pointwise modes; reduction
// operators). It is how one sees which graphs a framework builds (PyTorch's SDPA among them) without
// looking inside anyone's binaries.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "backend_plan.h"
#include "backend_store.h"

namespace tbdsim::dnn {
namespace {

std::string join(const std::vector<int64_t>& values) {
    std::string out;
    for (size_t i = 0; i < values.size(); ++i) out += (i > 0 ? "," : "") + std::to_string(values[i]);
    return out;
}

std::string describe_tensor(const BackendDescriptor& t) {
    char line[96];
    std::snprintf(line, sizeof line, "tensor uid=%lld type=%d%s%s",
                  static_cast<long long>(t.scalar<int64_t>(CUDNN_ATTR_TENSOR_UNIQUE_ID)),
                  static_cast<int>(t.scalar<cudnnDataType_t>(CUDNN_ATTR_TENSOR_DATA_TYPE)),
                  t.scalar<bool>(CUDNN_ATTR_TENSOR_IS_VIRTUAL) ? " virtual" : "",
                  t.scalar<bool>(CUDNN_ATTR_TENSOR_IS_BY_VALUE) ? " by-value" : "");
    return std::string(line) + " dims=" + join(t.array<int64_t>(CUDNN_ATTR_TENSOR_DIMENSIONS)) +
           " strides=" + join(t.array<int64_t>(CUDNN_ATTR_TENSOR_STRIDES));
}

// One descriptor-typed attribute's referent, in a line.
std::string describe(const BackendDescriptor* d) {
    if (d == nullptr) return "(not ours)";
    switch (d->type) {
        case CUDNN_BACKEND_TENSOR_DESCRIPTOR:
            return describe_tensor(*d);
        case CUDNN_BACKEND_POINTWISE_DESCRIPTOR:
            return "pointwise mode=" + std::to_string(d->scalar<int>(CUDNN_ATTR_POINTWISE_MODE));
        case CUDNN_BACKEND_REDUCTION_DESCRIPTOR:
            return "reduction operator=" + std::to_string(d->scalar<int>(CUDNN_ATTR_REDUCTION_OPERATOR));
        default:
            return "descriptor type=" + std::to_string(static_cast<int>(d->type));
    }
}

void log_attribute(int name, const BackendDescriptor::Value& value) {
    if (value.type == CUDNN_TYPE_BACKEND_DESCRIPTOR) {
        for (int64_t i = 0; i < value.count; ++i) {
            void* pointer = nullptr;
            std::memcpy(&pointer, value.bytes.data() + i * sizeof(void*), sizeof(void*));
            std::fprintf(stderr, "tbdsim cudnn:     attr %d: %s\n", name,
                         describe(backend_descriptor(pointer)).c_str());
        }
        return;
    }
    std::string bytes;
    for (size_t i = 0; i < value.bytes.size() && i < 16; ++i) bytes += std::to_string(value.bytes[i]) + " ";
    std::fprintf(stderr, "tbdsim cudnn:     attr %d: type %d count %lld bytes %s\n", name, static_cast<int>(value.type),
                 static_cast<long long>(value.count), bytes.c_str());
}

}  // namespace

void log_graph_if_asked(const BackendDescriptor& graph) {
    static const bool enabled = [] {
        const char* value = std::getenv("TBDSIM_CUDNN_BACKEND_LOG");
        return value != nullptr && value[0] == '1';
    }();
    if (!enabled) return;
    const auto ops = graph.array<void*>(CUDNN_ATTR_OPERATIONGRAPH_OPS);
    std::fprintf(stderr, "tbdsim cudnn: operation graph of %zu operations\n", ops.size());
    for (void* pointer : ops) {
        const BackendDescriptor* op = backend_descriptor(pointer);
        if (op == nullptr) continue;
        // The mode as the operation copied it when finalized (its pointwise descriptor may be gone).
        const int mode = op->snapshot != nullptr && op->snapshot->operations.size() == 1
                             ? op->snapshot->operations.front().pointwise_mode
                             : -1;
        std::fprintf(stderr, "tbdsim cudnn:   operation type %d (mode %d)\n", static_cast<int>(op->type), mode);
        for (const auto& [name, value] : op->values) log_attribute(name, value);
    }
}

}  // namespace tbdsim::dnn
