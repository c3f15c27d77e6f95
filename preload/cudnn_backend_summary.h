// What the collector keeps of a cuDNN backend execution plan: its graph's operations (kind, tensors by
// unique id, shapes, data types, FLOPs), whether its engine runs on tensor cores, and its workspace.
// Captured while the descriptors are finalized (cudnn_backend_descriptor_hooks.cpp): frontends,
// PyTorch's cudnn frontend among them, destroy the operation and graph descriptors once the plan is
// built, which the backend API allows, so they cannot be read back at cudnnBackendExecute.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "library_call.h"

namespace tbdprof::preload::cudnn_backend {

struct Tensor {
    int64_t uid = 0;
    bool is_virtual = false;
    bool by_value = false;  // a host scalar in the variant pack (scales, fill values): no device operand
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    std::vector<int64_t> dims;
    std::vector<int64_t> strides;  // as many as dims when read; otherwise the extent is unknown
    int64_t elements() const {
        int64_t n = dims.empty() ? 0 : 1;
        for (int64_t d : dims) n *= d;
        return n;
    }
    bool in_device_memory() const { return !is_virtual && !by_value; }
};

struct Operation {
    cudnnBackendDescriptorType_t type{};
    raw::LibraryOp op = raw::LibraryOp::Pointwise;
    bool main = false;           // a convolution, matmul or cuDNN's own SDPA operation
    int pointwise_mode = -1;     // cudnnPointwiseMode_t of pointwise operations
    std::vector<Tensor> inputs;  // what the operation reads, its main operands first
    Tensor output;               // what it writes (O or dQ for the SDPA operations)
    double flops = 0;            // by the collector's rules, cudnn_flops.h
    int64_t m = 0, n = 0, k = 0, batch = 1;
};

using Operations = std::vector<Operation>;

struct PlanSummary {
    Operations operations;
    // The call as recorded (finish_summary): the main operation's kind and shape, the graph's FLOPs,
    // and the operations whose inputs are a and b (the main one) and whose output is c (the last).
    raw::LibraryOp op = raw::LibraryOp::Pointwise;
    size_t main = 0;
    double flops = 0;
    bool tensor_core = false;  // the engine carries CUDNN_NUMERICAL_NOTE_TENSOR_CORE
    int64_t workspace_bytes = 0;
};

// One finalized operation descriptor of type `type` read through the backend getters; false when the
// collector does not know the operation (the plan's FLOPs are then unknown).
bool read_operation(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t descriptor, Operation* out);

// A finalized graph's operations read back through the getters (graph -> operations -> tensors), for
// plans whose graph the collector did not see being built; empty when that fails.
Operations read_graph(cudnnBackendDescriptor_t graph);

// The plan's engine notes and workspace size, read at its finalization (the plan is alive then).
void read_plan_facts(cudnnBackendDescriptor_t plan, PlanSummary* out);

// The engine config -> engine -> graph chain of a finalized plan read through the getters.
Operations read_plan_graph(cudnnBackendDescriptor_t plan);

// Fills op, main and flops from the operations. A scaled dot-product attention graph (cuDNN's SDPA
// operation, or matmuls around an exponential on FP16 / BF16 data: two forward, four or more
// backward) is one fused kernel and counts cudnn_flops::attention_flops; any other graph the sum of
// its operations' FLOPs.
void finish_summary(PlanSummary* summary);

// The summary kept for `plan` at its finalization; null when none was (unknown plan or operations).
std::shared_ptr<const PlanSummary> plan_summary(cudnnBackendDescriptor_t plan);

}  // namespace tbdprof::preload::cudnn_backend
